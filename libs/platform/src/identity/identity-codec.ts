import { MalformedIdentity, parseExecutionIdentity, type ExecutionIdentity } from '@openbot/domain';
import { InvalidStoredJson, type Codec } from '@openbot/engine';

/**
 * How an ExecutionIdentity (IDN-01) is stored with its execution: `encode` writes every field as
 * JSON (no cast: a field the type gains must be written here too), `decode` checks each field
 * with `parseExecutionIdentity` and answers InvalidStoredJson where it does not fit (CALL-07).
 */
export const executionIdentity: Codec<ExecutionIdentity> = {
  encode(identity) {
    return {
      owner: identity.owner.kind === 'organization' ? { kind: 'organization', id: identity.owner.id } : { kind: 'platform', id: null },
      actor: { kind: identity.actor.kind, id: identity.actor.id },
      token: identity.token === null ? null : { kind: identity.token.kind, id: identity.token.id },
      botId: identity.botId,
      delegation: identity.delegation.map((link) => ({ botId: link.botId, executionId: link.executionId })),
      sourceExecutionId: identity.sourceExecutionId,
      limits: { permissions: [...identity.limits.permissions] },
      ...(identity.requires === undefined ? {} : { requires: [...identity.requires] }),
    };
  },
  decode(json, path = '') {
    try {
      return parseExecutionIdentity(json);
    } catch (error) {
      if (error instanceof MalformedIdentity) throw new InvalidStoredJson(path, `an execution identity (${error.message})`);
      throw error;
    }
  },
};
