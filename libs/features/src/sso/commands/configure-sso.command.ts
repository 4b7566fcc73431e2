import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { EgressPolicy } from '../../../../platform/src/egress/egress-policy';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { lockConfiguration, requireDefaultRoleGrant, requireSsoManage } from '../sso-configurations';
import {
  SSO_CLIENT_SECRET_PURPOSE,
  SSO_CONFIGURATION_COLUMNS,
  toSsoConfigurationView,
  type SsoConfigurationRow,
  type SsoConfigurationView,
  type SsoDefaultRole,
} from '../sso-view';

/**
 * Sets the caller's organization's OpenID Connect configuration (`PUT /v1/sso`), creating or
 * replacing it. The issuer must pass the egress policy now (a refusal is a 400 on `issuer`); its
 * endpoints are discovered at each login, where the policy is checked again. The client secret
 * is sealed in the same transaction as the row, and the replaced secret is deleted with it.
 * Every change raises `revision`, which retires the relying parties cached for the old one.
 * The default role is a role grant: the caller needs `members.manage` and every permission of it,
 * and a new default role is audited as `sso.default-role-changed` beside `sso.configured`.
 */
export class ConfigureSso extends Command<SsoConfigurationView> {
  constructor(
    readonly caller: MemberCaller,
    readonly issuer: string,
    readonly clientId: string,
    readonly clientSecret: string,
    readonly allowedDomains: readonly string[],
    readonly defaultRole: SsoDefaultRole,
  ) {
    super();
  }
}

@CommandHandler(ConfigureSso)
export class ConfigureSsoHandler implements ICommandHandler<ConfigureSso> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealedRecords: SealedRecords,
    @Inject(EgressPolicy) private readonly egress: EgressPolicy,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, issuer, clientId, clientSecret, allowedDomains, defaultRole }: ConfigureSso): Promise<SsoConfigurationView> {
    requireSsoManage(caller);
    requireDefaultRoleGrant(caller, defaultRole);
    await this.checkIssuer(issuer);
    const domains = [...new Set(allowedDomains.map((domain) => domain.toLowerCase()))];
    return this.db.transaction(async (tx) => {
      await lockConfiguration(tx, caller.organizationId);
      const previous = await tx.one<{ recordId: string | null; activeRole: SsoDefaultRole | null }>(
        `SELECT client_secret_record_id AS "recordId", CASE WHEN deleted_at IS NULL THEN default_role END AS "activeRole" FROM sso_configurations WHERE organization_id = $1`,
        [caller.organizationId],
      );
      const recordId = await this.sealedRecords.put(SSO_CLIENT_SECRET_PURPOSE, clientSecret, tx);
      const row = await tx.one<SsoConfigurationRow>(
        `INSERT INTO sso_configurations (organization_id, issuer, client_id, client_secret_record_id, allowed_domains, default_role, revision)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, 1)
         ON CONFLICT (organization_id) DO UPDATE SET
           issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id, client_secret_record_id = EXCLUDED.client_secret_record_id,
           allowed_domains = EXCLUDED.allowed_domains, default_role = EXCLUDED.default_role,
           revision = sso_configurations.revision + 1, updated_at = now(), deleted_at = NULL
         RETURNING ${SSO_CONFIGURATION_COLUMNS}`,
        [caller.organizationId, issuer, clientId, recordId, JSON.stringify(domains), defaultRole],
      );
      if (previous?.recordId != null) await tx.count('DELETE FROM sealed_records WHERE id = $1', [previous.recordId]);
      // Logins begun under the previous revision cannot complete any more; drop them now.
      await tx.count('DELETE FROM sso_logins WHERE organization_id = $1', [caller.organizationId]);
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'sso.configured',
        target: { type: 'sso-configuration', id: caller.organizationId },
        details: { issuer, clientId, allowedDomains: domains, defaultRole, revision: row!.revision },
      });
      // Like a member's role change: who granted which role, from what (null: SSO was off), to whom it now goes.
      const from = previous?.activeRole ?? null;
      if (from !== defaultRole) {
        await recordAudit(tx, {
          organizationId: caller.organizationId,
          actor: caller,
          action: 'sso.default-role-changed',
          target: { type: 'sso-configuration', id: caller.organizationId },
          details: { from, to: defaultRole, issuer, revision: row!.revision },
        });
      }
      return toSsoConfigurationView(row!, this.config.publicUrl);
    });
  }

  private async checkIssuer(issuer: string): Promise<void> {
    const decision = await this.egress.check(issuer);
    if (!decision.allowed) throw new InvalidInput([{ path: 'issuer', message: `issuer ${decision.reason}` }]);
    const url = decision.url;
    // OpenID Connect Discovery §2: an issuer is https (or http for a local provider here), with no query or fragment.
    if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || issuer.includes('#') || issuer.includes('?')) {
      throw new InvalidInput([{ path: 'issuer', message: 'issuer must be a URL without credentials, query or fragment' }]);
    }
  }
}
