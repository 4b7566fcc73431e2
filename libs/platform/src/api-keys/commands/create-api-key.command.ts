import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, type ApiKeyId, type InputIssue, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { Database, type Sql } from '../../database/sql';
import { checkRoomFor } from '../../limits/organization-limits';
import { newId } from '@openbot/domain';
import { generateSecret, hashSecret } from '../../identity/api-key-secret';
import type { ApiKeyView } from '../api-key-view';

export interface CreatedApiKey extends ApiKeyView {
  /** Shown once; only its hash is stored. */
  readonly secret: string;
}

/**
 * A new key for the calling member, optionally expiring, optionally limited to `scopes`: a key
 * can only narrow the rights of the credential that creates it (IDN-02). A scope the
 * caller does not have is an InvalidInput; without `scopes`, a key made with a scoped key gets
 * that key's effective rights as its scopes, and only an unscoped key or a session makes an
 * unscoped key (the member's full rights, following later role changes). The organization's
 * live keys are limited (`apiKeys`, decision 076): past it, 409 LimitReached.
 */
export class CreateApiKey extends Command<CreatedApiKey> {
  constructor(
    readonly caller: MemberCaller,
    readonly name: string,
    readonly expiresAt: Date | null,
    readonly scopes: readonly string[] | null = null,
  ) {
    super();
  }
}

@CommandHandler(CreateApiKey)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKey> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, name, expiresAt, scopes }: CreateApiKey): Promise<CreatedApiKey> {
    if (scopes !== null) {
      const issues: InputIssue[] = [];
      scopes.forEach((scope, index) => {
        if (!caller.permissions.includes(scope as never)) {
          issues.push({ path: `scopes.${index}`, message: `scope "${scope}" is not a permission this caller has; a key can only narrow its creator's rights` });
        }
      });
      if (issues.length > 0) throw new InvalidInput(issues);
    }
    // Some ISO 8601 forms pass the DTO check but are no JavaScript date (`+9999-…`, `2031-W01`).
    if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) {
      throw new InvalidInput([{ path: 'expiresAt', message: 'expiresAt must be an ISO 8601 date-time' }]);
    }
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new InvalidInput([{ path: 'expiresAt', message: 'expiresAt must be in the future' }]);
    }
    const id = newId<ApiKeyId>();
    const secret = generateSecret(id);
    const [row, uniqueScopes] = await this.db.transaction(async (tx) => {
      await checkRoomFor(tx, caller.organizationId, this.config.organizationLimits, 'apiKeys');
      const granted = scopes ?? (await inheritedScopes(tx, caller));
      const uniqueScopes = granted === null ? null : [...new Set(granted)].sort();
      const inserted = await tx.one<{ created_at: Date }>(
        `INSERT INTO api_keys (id, organization_id, member_id, name, secret_hash, expires_at, last_used_at, revoked_at, scopes)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7::jsonb)
         RETURNING created_at`,
        [id, caller.organizationId, caller.memberId, name, hashSecret(secret), expiresAt, uniqueScopes === null ? null : JSON.stringify(uniqueScopes)],
      );
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'api-key.created',
        target: { type: 'api-key', id },
        details: { name, memberId: caller.memberId, scopes: uniqueScopes, expiresAt: expiresAt?.toISOString() ?? null },
      });
      return [inserted, uniqueScopes] as const;
    });
    return {
      id,
      name,
      memberId: caller.memberId,
      createdAt: row!.created_at,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      scopes: uniqueScopes,
      secret,
    };
  }
}

/**
 * The scopes a key gets when none are asked for: none (the member's full rights) when the caller
 * holds them too, that is a session or an unscoped key; otherwise the calling key's effective
 * rights, so the new key can never do more than the key that made it, also after a promotion.
 */
async function inheritedScopes(tx: Sql, caller: MemberCaller): Promise<readonly string[] | null> {
  if (caller.apiKeyId === null) return null;
  const key = await tx.one<{ scopes: string[] | null }>('SELECT scopes FROM api_keys WHERE id = $1', [caller.apiKeyId]);
  return key === undefined || key.scopes !== null ? [...caller.permissions] : null;
}
