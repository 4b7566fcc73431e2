import { childIdentity, DELEGATED_TASK_PERMISSIONS, effectivePermissions, isMemberRole, MalformedIdentity, parseExecutionIdentity, type ExecutionIdentity } from '@openbot/domain';
import { executionReads, type IdentityCheck, type IdentityVerdict, type Json, type Queryable } from '@openbot/engine';
import { executionIdentity } from './identity-codec';

/** PostgreSQL's "undefined_table": the sessions table of SSO is not there (yet). */
const UNDEFINED_TABLE = '42P01';

interface Verdicts {
  readonly owner: boolean;
  readonly actor: boolean;
  readonly token: boolean;
  /** The member's current role and its key's scopes (null for services and sessions). */
  readonly role: string | null;
  readonly scopes: string[] | null;
}

/**
 * The product's side of IDN-06: is an execution's identity still valid, now? One query answers
 * every part at once — the owning organization still exists, the member is not removed (or the
 * service is not disabled), the API key is neither revoked nor expired, the SSO session has not
 * ended. Nothing is cached between checks, so a revocation takes effect at the very next one.
 */
export class SqlIdentityCheck implements IdentityCheck {
  constructor(private readonly db: Queryable) {}

  async check(stored: Json): Promise<IdentityVerdict> {
    let identity: ExecutionIdentity;
    try {
      identity = parseExecutionIdentity(stored);
    } catch (error) {
      if (error instanceof MalformedIdentity) return { invalid: error.message };
      throw error;
    }
    const { owner, actor, token } = identity;
    if (token !== null && (token.kind === 'service') !== (actor.kind === 'service')) return { invalid: `a ${token.kind} token cannot act for a ${actor.kind}` };
    if (token?.kind === 'service' && token.id !== actor.id) return { invalid: 'a service acts only with its own credential' };
    let verdicts: Verdicts;
    try {
      const { rows } = await this.db.query<Verdicts>({
        name: `identity.check.${token?.kind === 'api-key' || token?.kind === 'session' ? token.kind : 'none'}`,
        text: checkSql(token?.kind === 'api-key' || token?.kind === 'session' ? token.kind : null),
        values: [owner.kind, owner.id, actor.kind, actor.id, token?.kind === 'api-key' || token?.kind === 'session' ? token.id : null],
      });
      verdicts = rows[0]!;
    } catch (error) {
      // No sessions table means no session can be valid: fail closed, never open.
      if ((error as { code?: unknown }).code === UNDEFINED_TABLE && token?.kind === 'session') return { invalid: 'sessions cannot be checked' };
      throw error;
    }
    if (!verdicts.owner) return { invalid: 'the organization no longer exists' };
    if (!verdicts.actor) return { invalid: actor.kind === 'member' ? 'the member was removed' : 'the service is disabled or gone' };
    if (!verdicts.token) return { invalid: token?.kind === 'session' ? 'the session ended' : 'the API key was revoked or expired' };
    const required = identity.requires ?? [];
    // What the work needs must stay within what every caller along the way allowed (IDN-02, IDN-07).
    const beyond = required.filter((permission) => !identity.limits.permissions.includes(permission));
    if (beyond.length > 0) return { invalid: `the identity's limits do not allow ${beyond.join(', ')}` };
    if (identity.delegation.length > 0) {
      const broken = await this.brokenLink(identity);
      if (broken !== null) return { invalid: broken };
    }
    if (actor.kind === 'member' && required.length > 0) {
      const now = verdicts.role !== null && isMemberRole(verdicts.role) ? effectivePermissions(verdicts.role, verdicts.scopes) : [];
      const lost = required.filter((permission) => !now.includes(permission));
      if (lost.length > 0) return { invalid: `the member may no longer use ${lost.join(', ')}` };
    }
    return 'valid';
  }

  private brokenLink(identity: ExecutionIdentity): Promise<string | null> {
    return brokenChain(this.db, identity);
  }

  /**
   * A child keeps every limit of its parent and names it as its source (IDN-02). A delegated task
   * (hint `{ delegateTo: botId }`) also records the hop in its delegation chain, runs as the
   * target Bot, and is narrowed to what a task may do.
   */
  derive(parent: Json, sourceExecutionId: string, hint: Json | null = null): Json {
    let identity: ExecutionIdentity;
    try {
      identity = parseExecutionIdentity(parent);
    } catch {
      // Passed on unchanged: the child's own check refuses it, nothing is made up here.
      return parent;
    }
    const delegateTo = hint !== null && typeof hint === 'object' && !Array.isArray(hint) && typeof hint.delegateTo === 'string' ? hint.delegateTo : null;
    if (delegateTo === null) return executionIdentity.encode(childIdentity(identity, { sourceExecutionId }));
    return executionIdentity.encode(childIdentity(identity, { sourceExecutionId, delegatedTo: { botId: delegateTo }, addPermissionsLimit: DELEGATED_TASK_PERMISSIONS }));
  }
}

/**
 * A delegated identity's chain, checked before each send (IDN-02): every Bot that handed the work
 * on and the Bot it runs still exist in the owning organization, and every hop's execution is
 * work of that organization. Null when it holds.
 */
async function brokenChain(db: Queryable, identity: ExecutionIdentity): Promise<string | null> {
  const bots = [...identity.delegation.map((link) => link.botId), ...(identity.botId === null ? [] : [identity.botId])];
  const { rows } = await db.query<{ bots: number }>({
    name: 'identity.check.delegation',
    text: `SELECT count(DISTINCT id)::int AS bots FROM bots WHERE id = ANY($2::uuid[]) AND organization_id = $1::uuid`,
    values: [identity.owner.id, bots],
  });
  if (rows[0]!.bots < new Set(bots).size) return 'a Bot of its delegation chain no longer exists';
  const organizationId = identity.owner.id ?? undefined;
  for (const link of identity.delegation) {
    if ((await executionReads.byId(db, link.executionId, organizationId === undefined ? {} : { organizationId })) === null) {
      return 'an execution of its delegation chain is not work of its organization';
    }
  }
  return null;
}

/**
 * $1 owner kind, $2 organization ID (null: platform), $3 actor kind, $4 actor ID, $5 token ID.
 * Only the token kind's own table is named, so a member without SSO never touches `sessions`.
 */
function checkSql(token: 'api-key' | 'session' | null): string {
  const tokenSql =
    token === 'api-key'
      ? `EXISTS (SELECT 1 FROM api_keys WHERE id = $5::uuid AND member_id = $4::uuid AND organization_id = $2::uuid
                   AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()))`
      : token === 'session'
        ? `EXISTS (SELECT 1 FROM sessions WHERE id = $5::uuid AND member_id = $4::uuid AND organization_id = $2::uuid
                     AND revoked_at IS NULL AND expires_at > now())`
        : `$5::uuid IS NULL`;
  return `SELECT
            CASE WHEN $1::text = 'organization' THEN EXISTS (SELECT 1 FROM organizations WHERE id = $2::uuid) ELSE $2::uuid IS NULL END AS owner,
            CASE WHEN $3::text = 'member'
                 THEN EXISTS (SELECT 1 FROM members WHERE id = $4::uuid AND organization_id = $2::uuid AND removed_at IS NULL)
                 ELSE EXISTS (SELECT 1 FROM services WHERE id = $4::uuid AND organization_id IS NOT DISTINCT FROM $2::uuid AND disabled_at IS NULL)
            END AS actor,
            ${tokenSql} AS token,
            (SELECT role FROM members WHERE id = $4::uuid AND $3::text = 'member') AS role,
            ${token === 'api-key' ? '(SELECT scopes FROM api_keys WHERE id = $5::uuid)' : 'NULL::jsonb'} AS scopes`;
}
