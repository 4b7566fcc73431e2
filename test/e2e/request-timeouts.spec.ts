import { newId } from '@openbot/domain';
import { Engine, type Workflow } from '@openbot/engine';
import { connect, type AddressInfo } from 'node:net';
import { openSse } from '../support/sse-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { ticksWorkflow } from '../support/ticks-workflow';

/**
 * Request and body timeouts (docs/decisions/074, docs/operating.md "Request and body timeouts"):
 * a client that sends its body slowly loses the connection after OPENBOT_BODY_TIMEOUT_SECONDS
 * (shortened to 1 s here), while an event stream that lasts longer stays open.
 */

const ticks = ticksWorkflow('e2e.timeouts.ticks');

/** Sends `head` and the first bytes of a body over a raw socket, never the rest; resolves with what came back once the server closed it. */
function slowBody(port: number, head: string, firstBytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(`${head}\r\n\r\n${firstBytes}`));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('request and body timeouts', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_BODY_TIMEOUT_SECONDS: '1' } });
    t.app.get(Engine).register(ticks as unknown as Workflow);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('security: an unauthenticated slow body is answered 408 and its connection closed, while an event stream open longer than that stays open', async () => {
    const acme = await t.createOrganization('Timeouts');
    const engine = t.app.get(Engine);
    const { executionId: id } = await engine.submit({
      workflow: ticks.name,
      input: { k: 2 },
      scope: { kind: 'member', id: acme.memberId, organizationId: acme.organizationId },
      resource: { type: 'turn', id: newId() },
    });
    const stream = await openSse(port, `/v1/executions/${id}/events`, { authorization: `Bearer ${acme.secret}` });
    expect(stream.status).toBe(200);
    await stream.waitFor('id: 1\n');

    // No credential, a JSON body announced as 100 bytes of which 5 ever come: the server closes it.
    const head = ['POST /v1/chats HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Length: 100'].join('\r\n');
    const answer = await slowBody(port, head, '{"bot');
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');

    // The stream began before the slow request and is still open after it was cut off: it receives what comes next.
    await engine.signal(id, 'go');
    await stream.waitFor('event: execution.ended');
    expect([...stream.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([1, 2, 3]);
  });

  it('security: on the upload route a slow JSON body is cut off like any other, and a multipart one without a credential is answered 401 and closed without reading the rest', async () => {
    const json = ['POST /v1/files HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Length: 100'].join('\r\n');
    expect((await slowBody(port, json, '{"na')).split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    const multipart = ['POST /v1/files HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: multipart/form-data; boundary=b', 'Content-Length: 100000'].join('\r\n');
    expect((await slowBody(port, multipart, '--b\r\n')).split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized');
  });

  it('a body that arrives in time is served as usual', async () => {
    const acme = await t.createOrganization('Timeouts in time');
    const res = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${acme.secret}`).send({ name: 'in time' });
    expect(res.status).toBe(201);
  });
});
