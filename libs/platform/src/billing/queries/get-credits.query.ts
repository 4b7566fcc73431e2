import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { budgetUsage } from '../budget-usage';

export interface CreditsView {
  /** The ledger's sum: grants, adjustments and charges. It may fall below 0 (an adjustment, or a call whose input passed its estimate). */
  readonly balanceMicros: number;
  /** What calls in flight and unknown usage hold. */
  readonly reservedMicros: number;
}

/** The organization's credits, derived from the ledger and the open reservations (PLAT-08). */
export class GetCredits extends Query<CreditsView> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@QueryHandler(GetCredits)
export class GetCreditsHandler implements IQueryHandler<GetCredits> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller }: GetCredits): Promise<CreditsView> {
    const credits = await budgetUsage.credits(this.db, caller.organizationId);
    return { balanceMicros: Number(credits?.balanceMicros ?? 0n), reservedMicros: Number(credits?.reservedMicros ?? 0n) };
  }
}
