import { Module } from '@nestjs/common';
import { CreateBudgetHandler } from './commands/create-budget.command';
import { CreateRateLimitHandler } from './commands/create-rate-limit.command';
import { DeleteRateLimitHandler } from './commands/delete-rate-limit.command';
import { GetRateLimitHandler, ListRateLimitsHandler } from './queries/list-rate-limits.query';
import { DeleteBudgetHandler } from './commands/delete-budget.command';
import { GrantCreditsHandler } from './commands/grant-credits.command';
import { ReleaseUsageHandler } from './commands/release-usage.command';
import { SetPriceHandler } from './commands/set-price.command';
import { GetBudgetHandler } from './queries/get-budget.query';
import { GetCreditsHandler } from './queries/get-credits.query';
import { ListBudgetsHandler } from './queries/list-budgets.query';
import { ListCreditEntriesHandler } from './queries/list-credit-entries.query';
import { ListPricesHandler } from './queries/list-prices.query';
import { UsageSummaryHandler } from './queries/usage-summary.query';

/** Prices, credits, budgets and usage reports (docs/decisions/024-billing-ledger-and-reservations.md). */
@Module({
  providers: [
    SetPriceHandler,
    GrantCreditsHandler,
    CreateBudgetHandler,
    DeleteBudgetHandler,
    ReleaseUsageHandler,
    ListPricesHandler,
    GetCreditsHandler,
    ListCreditEntriesHandler,
    ListBudgetsHandler,
    GetBudgetHandler,
    UsageSummaryHandler,
    CreateRateLimitHandler,
    DeleteRateLimitHandler,
    ListRateLimitsHandler,
    GetRateLimitHandler,
  ],
})
export class BillingModule {}
