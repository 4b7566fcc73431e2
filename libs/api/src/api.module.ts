import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { BotsController } from './bots/bots.controller';
import { MemoriesController } from './memories/memories.controller';
import { ChatMessagesController } from './chats/chat-messages.controller';
import { ChatsController } from './chats/chats.controller';
import { UsageController } from './usage/usage.controller';
import { BudgetsController } from './billing/budgets.controller';
import { CreditsController } from './billing/credits.controller';
import { PlatformBillingController } from './billing/platform-billing.controller';
import { PricesController } from './billing/prices.controller';
import { RateLimitsController } from './billing/rate-limits.controller';
import { MembersController } from './members/members.controller';
import { AuditController } from './audit/audit.controller';
import { SsoLoginController } from './sso/sso-login.controller';
import { SsoController } from './sso/sso.controller';
import { RetentionController } from './retention/retention.controller';
import { ExecutionsController } from './executions/executions.controller';
import { OpenEventReads } from './executions/open-event-reads';
import { ApprovalsController } from './approvals/approvals.controller';
import { FilesController } from './files/files.controller';
import { StuckExecutionsController } from './platform/stuck-executions.controller';
import { RemindersController } from './reminders/reminders.controller';
import { BearerGuard } from './auth/bearer.guard';
import { StartupGateGuard } from './auth/startup-gate.guard';
import { ErrorBoundaryFilter } from './errors/error-boundary.filter';
import { RouteIndex } from './errors/route-index';
import { UnsavedFailures } from './errors/unsaved-failures';
import { HealthController } from './health/health.controller';
import { MeController } from './me/me.controller';
import { LimitsController } from './limits/limits.controller';
import { ModelProvidersController } from './model-providers/model-providers.controller';
import { AppAuthorizationController, ConnectionAuthorizationController, OAuthCallbackController } from './app-oauth/app-oauth.controller';
import { AppsController, ConnectionsController } from './apps/apps.controller';
import { AppIndexController, AppProofsController } from './app-catalog/app-catalog.controller';
import { ViewsController } from './apps/views.controller';
import { OrganizationsController } from './organizations/organizations.controller';
import { VaultsController } from './vaults/vaults.controller';
import { inputValidationPipe } from './validation/input-validation.pipe';

/** The public HTTP API: controllers only dispatch to the command and query buses. */
@Module({
  controllers: [HealthController, OrganizationsController, ApiKeysController, MeController, ExecutionsController, ApprovalsController, StuckExecutionsController, ModelProvidersController, AppsController, ConnectionsController, AppProofsController, AppIndexController, ConnectionAuthorizationController, AppAuthorizationController, OAuthCallbackController, ViewsController, BotsController, ChatsController, ChatMessagesController, UsageController, PricesController, CreditsController, BudgetsController, RateLimitsController, PlatformBillingController, MembersController, AuditController, SsoController, SsoLoginController, VaultsController, RemindersController, MemoriesController, FilesController, RetentionController, LimitsController],
  providers: [
    ErrorBoundaryFilter,
    UnsavedFailures,
    OpenEventReads,
    { provide: APP_FILTER, useExisting: ErrorBoundaryFilter },
    // Guards run in this order: the startup gate first, then authentication.
    { provide: APP_GUARD, useClass: StartupGateGuard },
    { provide: APP_GUARD, useClass: BearerGuard },
    { provide: APP_PIPE, useFactory: inputValidationPipe },
  ],
})
export class ApiModule {
  /** `routes` is filled by Fastify's onRoute hook as Nest registers the controllers. */
  static forRoot(routes: RouteIndex): DynamicModule {
    return { module: ApiModule, providers: [{ provide: RouteIndex, useValue: routes }] };
  }
}
