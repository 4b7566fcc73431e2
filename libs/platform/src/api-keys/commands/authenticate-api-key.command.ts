import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { effectivePermissions, Unauthenticated, type MemberCaller, type MemberId, type MemberRole, type OrganizationId } from '@openbot/domain';
import { Database } from '../../database/sql';
import { keyIdOf, secretMatches } from '../../identity/api-key-secret';

/** How stale `last_used_at` may get before a request writes it again: one write a minute per key at most. */
const LAST_USED_RESOLUTION_SECONDS = 60;

/** Every request with an API key reads it: prepared once per connection, not parsed and planned each time. */
const READ_KEY = {
  name: 'api_keys.authenticate',
  text: `SELECT k.secret_hash AS "secretHash", k.organization_id AS "organizationId", k.member_id AS "memberId",
                m.role, k.scopes, k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AND m.removed_at IS NULL AS usable,
                k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => $2) AS "touch"
           FROM api_keys k JOIN members m ON m.id = k.member_id
          WHERE k.id = $1`,
};

/**
 * Turns a bearer secret into the calling member. Every failure is the same Unauthenticated
 * answer, so a caller learns nothing about which part was wrong.
 */
export class AuthenticateApiKey extends Command<MemberCaller> {
  constructor(readonly secret: string) {
    super();
  }
}

@CommandHandler(AuthenticateApiKey)
export class AuthenticateApiKeyHandler implements ICommandHandler<AuthenticateApiKey> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ secret }: AuthenticateApiKey): Promise<MemberCaller> {
    const id = keyIdOf(secret);
    if (id === null) throw new Unauthenticated();
    const row = await this.db.one<{
      secretHash: Buffer;
      organizationId: OrganizationId;
      memberId: MemberId;
      role: MemberRole;
      scopes: string[] | null;
      usable: boolean;
      touch: boolean;
    }>({ ...READ_KEY, values: [id, LAST_USED_RESOLUTION_SECONDS] });
    if (row === undefined || !secretMatches(secret, row.secretHash) || !row.usable) throw new Unauthenticated();
    if (row.touch) {
      await this.db.count('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id]);
    }
    return {
      kind: 'member',
      organizationId: row.organizationId,
      memberId: row.memberId,
      role: row.role,
      apiKeyId: id,
      sessionId: null,
      // The key's scopes only ever narrow its member's current role (a role change applies at once).
      permissions: effectivePermissions(row.role, row.scopes),
    };
  }
}
