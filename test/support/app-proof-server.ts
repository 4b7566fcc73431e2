import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bearer } from './chat-fixture';
import type { TestApp } from './test-app';
import { waitForExecutionState } from './tool-probes';

const TLS = join(__dirname, '..', 'fixtures', 'tls');

/** The CA file a test app trusts so it reaches the proof server (OPENBOT_EGRESS_CA_FILE). */
export const PROOF_SERVER_CA_FILE = join(TLS, 'localhost-cert.pem');

/**
 * A real HTTPS server with the committed self-signed certificate of 127.0.0.1
 * (test/fixtures/tls) that serves a proof token at `/.well-known/openbot-app-proof`.
 */
export interface ProofServer {
  /** `127.0.0.1:<port>`: the proof's domain. */
  readonly host: string;
  /** What it answers from now on. */
  serve(token: string): void;
  close(): Promise<void>;
}

export async function startProofServer(): Promise<ProofServer> {
  let served = '';
  const server: Server = createServer({ cert: readFileSync(join(TLS, 'localhost-cert.pem')), key: readFileSync(join(TLS, 'localhost-key.pem')) }, (req, res) => {
    if (req.url === '/.well-known/openbot-app-proof') res.writeHead(200, { 'content-type': 'text/plain' }).end(`${served}\n`);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (token) => void (served = token),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A verified proof of an App on 127.0.0.1: created, served, verified to its end. Answers the proof's ID. */
export async function proveApp(t: TestApp, secret: string, appId: string, server: ProofServer): Promise<string> {
  const proof = (await t.http().post(`/v1/apps/${appId}/proofs`).set('authorization', bearer(secret)).send({ domain: server.host }).expect(201)).body as { id: string; token: string };
  server.serve(proof.token);
  const verify = await t.http().post(`/v1/apps/${appId}/proofs/${proof.id}/verify`).set('authorization', bearer(secret)).send({}).expect(202);
  await waitForExecutionState(t, secret, (verify.body as { executionId: string }).executionId, 'completed');
  return proof.id;
}
