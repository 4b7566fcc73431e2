import { expectDeclaredNoErrorId } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The audit log and the credits ledger read oldest first by default and newest first with
 * `order=desc`, the cursor continuing in the order asked; a filter they do not know (an unknown
 * `type`, a parameter they do not take) is a 400 naming it, never the whole list as if filtered.
 */
describe('audit log and credits ledger: order and filters', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrganization('Ordered lists');
    // Five ledger entries (three grants, two adjustments), each also one audit event.
    for (const amountMicros of [1_000, 2_000, -300, 4_000, -500]) {
      await t.http().post(`/v1/platform/organizations/${org.organizationId}/credits`).set('authorization', `Bearer ${t.adminToken}`).send({ amountMicros, reason: `entry ${amountMicros}` }).expect(201);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Every ID of a list, page by page, following `next` with the same query. */
  const walk = async (path: string, query: string, limit: number): Promise<string[]> => {
    const ids: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 50; pages += 1) {
      const url: string = `${path}?limit=${limit}${query}${after === null ? '' : `&after=${after}`}`;
      const body = (await t.http().get(url).set('authorization', bearer(org.secret)).expect(200)).body as { data: Array<{ id: string }>; next: string | null };
      ids.push(...body.data.map((row) => row.id));
      if (body.next === null) return ids;
      after = body.next;
    }
    throw new Error(`${path} did not end`);
  };

  it.each(['/v1/audit-events', '/v1/credits/ledger'])('%s pages oldest first by default and newest first with order=desc, each page continuing in that order', async (path) => {
    const all = await walk(path, '', 200);
    expect(all.length).toBeGreaterThanOrEqual(5);
    const ascending = [...all].sort();
    expect(all).toEqual(ascending);
    expect(await walk(path, '&order=asc', 2)).toEqual(ascending);
    expect(await walk(path, '&order=desc', 2)).toEqual([...ascending].reverse());
    expect(await walk(path, '&order=desc', 200)).toEqual([...ascending].reverse());
  });

  it('the ledger filters by type, in either order and across pages', async () => {
    const grants = await walk('/v1/credits/ledger', '&type=grant', 1);
    const adjustments = await walk('/v1/credits/ledger', '&type=adjustment&order=desc', 1);
    expect(grants).toHaveLength(3);
    expect(adjustments).toHaveLength(2);
    expect(adjustments).toEqual([...adjustments].sort().reverse());
    const kinds = (await t.http().get('/v1/credits/ledger?type=adjustment').set('authorization', bearer(org.secret)).expect(200)).body as { data: Array<{ kind: string; amountMicros: number }> };
    expect(kinds.data.map((entry) => [entry.kind, entry.amountMicros])).toEqual([
      ['adjustment', -300],
      ['adjustment', -500],
    ]);
    expect(await walk('/v1/credits/ledger', '&type=charge', 10)).toEqual([]);
  });

  it('an unknown type or order is a 400 naming the field and the allowed values', async () => {
    const badType = await t.http().get('/v1/credits/ledger?type=refund').set('authorization', bearer(org.secret));
    expectDeclaredNoErrorId(badType, 400, 'InvalidInput');
    expect((badType.body as { issues: unknown[] }).issues).toEqual([{ path: 'type', message: 'type must be one of grant, charge, adjustment' }]);
    for (const path of ['/v1/audit-events', '/v1/credits/ledger']) {
      const badOrder = await t.http().get(`${path}?order=newest`).set('authorization', bearer(org.secret));
      expectDeclaredNoErrorId(badOrder, 400, 'InvalidInput');
      expect((badOrder.body as { issues: unknown[] }).issues).toEqual([{ path: 'order', message: 'order must be one of asc, desc' }]);
    }
  });

  it('a filter a list does not take is a 400 naming it, not the unfiltered list', async () => {
    const auditType = await t.http().get('/v1/audit-events?type=member.role-changed').set('authorization', bearer(org.secret));
    expectDeclaredNoErrorId(auditType, 400, 'InvalidInput');
    expect((auditType.body as { issues: unknown[] }).issues).toEqual([{ path: 'type', message: 'type is not a parameter of this list; it takes after, limit, order' }]);
    const ledgerTypo = await t.http().get('/v1/credits/ledger?kind=grant').set('authorization', bearer(org.secret));
    expectDeclaredNoErrorId(ledgerTypo, 400, 'InvalidInput');
    expect((ledgerTypo.body as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path)).toEqual(['kind']);
  });
});
