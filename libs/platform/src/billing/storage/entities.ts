import { BudgetEntity } from './budget.entity';
import { CreditAccountEntity } from './credit-account.entity';
import { CreditEntryEntity } from './credit-entry.entity';
import { PriceEntity } from './price.entity';
import { RateLimitEntity } from './rate-limit.entity';

/** The billing tables (docs/decisions/024-billing-ledger-and-reservations.md). */
export const BILLING_ENTITIES = [PriceEntity, CreditAccountEntity, CreditEntryEntity, BudgetEntity, RateLimitEntity] as const;
