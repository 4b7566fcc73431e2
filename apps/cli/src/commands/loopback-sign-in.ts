import { unwrap, type OpenbotClient, type Schemas } from '@openbot/client';
import type { Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { LoopbackListener } from '../context/loopback-listener';

/** How long the CLI waits for the sign-in's answer: the authorization's own lifetime. */
const AUTHORIZATION_WAIT_MS = 10 * 60_000;

export type AuthorizationOutcome = Schemas['AuthorizationOutcomeBody'];

/** `--port <port>`: the local port of the listener (0, the default, lets the system pick a free one). */
export function listenerPort(text: string | undefined): number {
  const port = text === undefined ? 0 : Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number, not "${text}"`);
  return port;
}

export interface LoopbackSignIn {
  /** The listener's port (`listenerPort`). */
  readonly port: number;
  /** What the sign-in is for, in the printed line: "authorize the connection", "sign in for the developer test". */
  readonly purpose: string;
  /** `--json`: the URL goes to stderr, stdout keeps only the JSON. */
  readonly json: boolean | undefined;
  /** Binds the sign-in to the listener's redirect at the server and answers the authorization server's URL. */
  readonly bind: (redirect: string) => Promise<string>;
  /** Stops waiting for the answer (the sign-in ended otherwise, e.g. its developer test's run). */
  readonly signal?: AbortSignal;
}

/**
 * An App sign-in of an API-key member through a loopback listener (RFC 8252, decision 066), for
 * a connection (`connections authorize`) and a developer test (`apps developer-tests authorize`):
 * listens on 127.0.0.1, binds the sign-in to it, prints the authorization server's URL to open in
 * a browser on this machine, receives the answer OpenBot's callback relays there and posts it with
 * the member's key to `POST /v1/oauth/authorizations/complete`. Answers the server's outcome.
 */
export async function signInThroughLoopback(context: Context, client: OpenbotClient, signIn: LoopbackSignIn): Promise<AuthorizationOutcome> {
  const listener = await LoopbackListener.open(signIn.port);
  try {
    const authorizationUrl = await signIn.bind(listener.redirect);
    const state = new URL(authorizationUrl).searchParams.get('state') ?? '';
    // The URL is printed, to be opened in a browser on this machine (valid once, for 10 minutes); its answer comes back to the listener.
    const say = signIn.json ? context.io.err.bind(context.io) : context.io.out.bind(context.io);
    say(`Open this URL in a browser on this machine to ${signIn.purpose} (valid once, for 10 minutes):\n${authorizationUrl}\nWaiting for the answer at ${listener.redirect} ...\n`);
    const answer = await listener.answer(state, AUTHORIZATION_WAIT_MS, signIn.signal);
    return await unwrap(client.POST('/v1/oauth/authorizations/complete', { body: answer }));
  } finally {
    await listener.close();
  }
}
