import type { ServerResponse } from 'node:http';
import { jsonOrTextBody, ScriptedServer, silentReply, type ListenAt, type RecordedRequest, type Reply } from './scripted-server';

export type { Reply } from './scripted-server';

/** A recorded request; `body` is the parsed JSON body, the raw text when it is not JSON, undefined when empty. */
export type RecordedToolRequest = RecordedRequest;

/**
 * A scripted stand-in for an organization's HTTP tool endpoint: a real HTTP server on 127.0.0.1
 * (any free port). It records every request (method, path, headers, parsed JSON body), counts
 * requests per `Idempotency-Key` header, and answers each request with the next scripted reply,
 * or the `fallback` reply once the script is empty (a 500 when there is neither; see `ScriptedServer`).
 */
export class FakeToolServer extends ScriptedServer {
  private constructor() {
    super({
      name: 'FakeToolServer',
      baseUrlSuffix: '',
      parseBody: jsonOrTextBody,
      unscripted: jsonReply(500, { error: 'no scripted reply' }),
    });
  }

  static start(at?: ListenAt): Promise<FakeToolServer> {
    return new FakeToolServer().listen(at);
  }

  /** The absolute URL of `path` on this server. */
  url(path = '/tool'): string {
    return `${this.baseUrl}${path.startsWith('/') ? path : `/${path}`}`;
  }
}

// ---- replies ---------------------------------------------------------------------------------

function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Answers at once with a JSON body. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => writeJson(res, status, body, headers);
}

/** Accepts the request and never answers (until the client gives up or the server closes). */
export const hangReply = silentReply;

/** Destroys the socket without an answer (a dropped connection). */
export function dropReply(): Reply {
  return (res) => {
    res.socket?.destroy();
  };
}

/** Answers with a JSON body after `ms`; nothing is written if the connection closed meanwhile. */
export function delayedJsonReply(ms: number, status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) =>
    new Promise<void>((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        res.off('close', onClose);
        writeJson(res, status, body, headers);
        resolve();
      }, ms);
      res.once('close', onClose);
    });
}
