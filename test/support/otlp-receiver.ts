import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON body carries it (hex IDs, typed attribute values). */
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes?: ReadonlyArray<{ key: string; value: Record<string, unknown> }>;
  readonly status?: { code?: number };
}

export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly attributes: Record<string, unknown>;
}

/**
 * An in-process OTLP/HTTP receiver: a plain node:http server that takes `POST /v1/traces` with the
 * exporter's JSON body (exporter-trace-otlp-http sends `application/json`), keeps the raw bodies
 * (where a leaked secret would show) and the spans.
 */
export class OtlpReceiver {
  private constructor(
    private readonly server: Server,
    readonly bodies: readonly string[],
    readonly contentTypes: readonly string[],
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const received = { bodies: [] as string[], contentTypes: [] as string[] };
    const server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        if (request.method === 'POST' && request.url === '/v1/traces') {
          received.bodies.push(Buffer.concat(parts).toString('utf8'));
          received.contentTypes.push(String(request.headers['content-type']));
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new OtlpReceiver(server, received.bodies, received.contentTypes);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  spans(): Span[] {
    const spans: Span[] = [];
    for (const body of this.bodies) {
      const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const resource of parsed.resourceSpans) {
        for (const scope of resource.scopeSpans) {
          for (const s of scope.spans) {
            const attributes: Record<string, unknown> = {};
            for (const a of s.attributes ?? []) attributes[a.key] = Object.values(a.value)[0];
            spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, attributes });
          }
        }
      }
    }
    return spans;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
