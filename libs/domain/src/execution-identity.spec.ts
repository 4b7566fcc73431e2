import type { MemberCaller } from './caller';
import {
  childIdentity,
  DELEGATED_TASK_PERMISSIONS,
  identityAllows,
  identityForMember,
  identityForService,
  MalformedIdentity,
  parseExecutionIdentity,
  type ExecutionIdentity,
} from './execution-identity';
import type { ApiKeyId, MemberId, OrganizationId } from './ids';
import { newId } from './new-id';
import { PERMISSIONS, type Permission } from './roles';

function member(overrides: Partial<MemberCaller> = {}): MemberCaller {
  return {
    kind: 'member',
    organizationId: newId<OrganizationId>(),
    memberId: newId<MemberId>(),
    role: 'member',
    apiKeyId: newId<ApiKeyId>(),
    sessionId: null,
    permissions: ['chats.read', 'chats.write', 'bots.read'],
    ...overrides,
  };
}

describe('ExecutionIdentity', () => {
  it('[IDN-01] keeps resource owner, current actor, original token, Bot, delegation and source execution as separate fields', () => {
    const caller = member();
    const botId = newId();
    const identity = identityForMember(caller, { botId });
    expect(identity).toEqual({
      owner: { kind: 'organization', id: caller.organizationId },
      actor: { kind: 'member', id: caller.memberId },
      token: { kind: 'api-key', id: caller.apiKeyId },
      botId,
      delegation: [],
      sourceExecutionId: null,
      limits: { permissions: ['chats.read', 'chats.write', 'bots.read'] },
    });
    // None of the parts is derived from another: the owner is not the actor, the token is not the actor.
    expect(new Set([identity.owner.id, identity.actor.id, identity.token!.id, identity.botId]).size).toBe(4);
    // JSON round trip (it is stored sealed as JSON) keeps every part.
    expect(parseExecutionIdentity(JSON.parse(JSON.stringify(identity)))).toEqual(identity);
  });

  it('[IDN-01] a service identity has an owner (platform or organization) and no member', () => {
    const serviceId = newId();
    const platform = identityForService({ id: serviceId, organizationId: null });
    expect(platform).toMatchObject({ owner: { kind: 'platform', id: null }, actor: { kind: 'service', id: serviceId }, token: { kind: 'service', id: serviceId } });
    expect(platform.limits.permissions).toEqual(PERMISSIONS);
    const organizationId = newId();
    const owned = identityForService({ id: serviceId, organizationId }, { permissions: ['chats.read'] });
    expect(owned).toMatchObject({ owner: { kind: 'organization', id: organizationId }, actor: { kind: 'service', id: serviceId } });
    expect(owned.limits.permissions).toEqual(['chats.read']);
    expect(JSON.stringify([platform, owned])).not.toContain('memberId');
    expect(parseExecutionIdentity(JSON.parse(JSON.stringify(platform)))).toEqual(platform);
  });

  it('[IDN-01] a stored identity that lost a part is malformed, never completed by guessing', () => {
    const identity = identityForMember(member());
    const stored = JSON.parse(JSON.stringify(identity)) as Record<string, unknown>;
    for (const field of ['owner', 'actor', 'token', 'delegation', 'limits', 'botId', 'sourceExecutionId']) {
      const { [field]: _dropped, ...rest } = stored;
      expect(() => parseExecutionIdentity(rest)).toThrow(MalformedIdentity);
    }
    expect(() => parseExecutionIdentity({ ...stored, owner: { kind: 'platform', id: null } })).toThrow(MalformedIdentity);
    expect(() => parseExecutionIdentity({ ...stored, limits: { permissions: ['everything'] } })).toThrow(MalformedIdentity);
    expect(() => parseExecutionIdentity({ ...stored, actor: { kind: 'member', id: 'ob_key_123' } })).toThrow(MalformedIdentity);
    expect(() => parseExecutionIdentity(null)).toThrow(MalformedIdentity);
  });

  it('[IDN-02] a child keeps every limit of its source; an added limit narrows it (intersection) and can never widen it', () => {
    const parent = identityForMember(member({ permissions: ['chats.read', 'chats.write', 'bots.read'] }), { botId: newId() });
    const sourceExecutionId = newId();
    const same = childIdentity(parent, { sourceExecutionId });
    expect(same).toEqual({ ...parent, sourceExecutionId });

    const narrowed = childIdentity(parent, { sourceExecutionId, addPermissionsLimit: ['chats.read', 'members.manage', 'sso.manage'] });
    expect(narrowed.limits.permissions).toEqual(['chats.read']);
    expect(identityAllows(narrowed, 'members.manage')).toBe(false);
    // Owner, actor, token, Bot and delegation do not change on the way down.
    expect({ ...narrowed, limits: parent.limits, sourceExecutionId: null }).toEqual(parent);

    // A grandchild asking for everything still has only what every ancestor allowed.
    const widened = childIdentity(narrowed, { addPermissionsLimit: [...PERMISSIONS] });
    expect(widened.limits.permissions).toEqual(['chats.read']);
    // Limits compose in any order to the same intersection.
    const a: Permission[] = ['chats.read', 'chats.write'];
    const b: Permission[] = ['chats.write', 'bots.read'];
    const ab = childIdentity(childIdentity(parent, { addPermissionsLimit: a }), { addPermissionsLimit: b });
    const ba = childIdentity(childIdentity(parent, { addPermissionsLimit: b }), { addPermissionsLimit: a });
    expect(ab.limits.permissions).toEqual(['chats.write']);
    expect([...ba.limits.permissions].sort()).toEqual([...ab.limits.permissions].sort());
    // The parent is not changed by deriving from it.
    expect(parent.limits.permissions).toEqual(['chats.read', 'chats.write', 'bots.read']);
  });

  it('[IDN-02] a delegation hop appends the source Bot and execution to the chain, runs the target Bot, and keeps every earlier hop', () => {
    const [rootBot, middleBot, leafBot, rootRun, middleRun] = [newId(), newId(), newId(), newId(), newId()];
    const root = identityForMember(member(), { botId: rootBot });
    const middle = childIdentity(root, { sourceExecutionId: rootRun, delegatedTo: { botId: middleBot }, addPermissionsLimit: DELEGATED_TASK_PERMISSIONS });
    const leaf = childIdentity(middle, { sourceExecutionId: middleRun, delegatedTo: { botId: leafBot }, addPermissionsLimit: DELEGATED_TASK_PERMISSIONS });
    expect(leaf.delegation).toEqual([
      { botId: rootBot, executionId: rootRun },
      { botId: middleBot, executionId: middleRun },
    ]);
    expect({ botId: leaf.botId, actor: leaf.actor, token: leaf.token, owner: leaf.owner }).toEqual({ botId: leafBot, actor: root.actor, token: root.token, owner: root.owner });
    expect(identityAllows(leaf, 'approvals.decide')).toBe(false);
    expect(identityAllows(leaf, 'chats.write')).toBe(true);
    // A parsed copy keeps the chain.
    expect(parseExecutionIdentity(JSON.parse(JSON.stringify(leaf)))).toEqual(leaf);
  });

  it('[IDN-02] an empty limit leaves nothing, and no later limit brings a right back', () => {
    const parent = identityForService({ id: newId(), organizationId: null });
    const none = childIdentity(parent, { addPermissionsLimit: [] });
    expect(none.limits.permissions).toEqual([]);
    expect(childIdentity(none, { addPermissionsLimit: [...PERMISSIONS] }).limits.permissions).toEqual([]);
  });

  it('[IDN-04] the token comes from the field authentication filled, never from the shape or prefix of an ID', () => {
    // An API key ID that looks like a session ID is still an API key.
    const keyed = member({ apiKeyId: 'sess_0000' as ApiKeyId, sessionId: null });
    expect(identityForMember(keyed).token).toEqual({ kind: 'api-key', id: 'sess_0000' });
    // A session whose ID looks like an API key secret is still a session.
    const session = member({ apiKeyId: null, sessionId: 'ob_live_1234' });
    expect(identityForMember(session).token).toEqual({ kind: 'session', id: 'ob_live_1234' });
    // No credential field set: no token, rather than one inferred from something else.
    expect(identityForMember(member({ apiKeyId: null, sessionId: null })).token).toBeNull();
    expect(identityForMember(member({ apiKeyId: null, sessionId: undefined })).token).toBeNull();
    // Both set is ambiguous: refused instead of picked by some order.
    expect(() => identityForMember(member({ sessionId: newId() }))).toThrow(/both/);
  });

  it('[IDN-04] the actor is the calling member, whatever Bot or input the work is for', () => {
    const caller = member();
    const otherAuthor = newId();
    const identity: ExecutionIdentity = identityForMember(caller, { botId: otherAuthor });
    expect(identity.actor).toEqual({ kind: 'member', id: caller.memberId });
    expect(identity.botId).toBe(otherAuthor);
  });
});
