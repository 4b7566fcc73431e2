import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { OpenbotMetrics } from './openbot-metrics';

/**
 * `GET /metrics` in the Prometheus text format on its own port (OPENBOT_METRICS_PORT), a plain
 * node:http server beside the API's Fastify (docs/decisions/034-metrics.md): the public port
 * never answers it, and a scrape never passes the API's guards, limits or logs. Started with the
 * app, closed at shutdown; off when the port is unset.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    @Inject(OpenbotMetrics) private readonly metrics: OpenbotMetrics,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  /** The port it listens on (the chosen one when configured as 0), or null when off. */
  get port(): number | null {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? (address as AddressInfo).port : null;
  }

  /** The address it listens on (`127.0.0.1` unless OPENBOT_METRICS_HOST says otherwise), or null when off. */
  get host(): string | null {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? (address as AddressInfo).address : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const listen = this.config.metrics;
    if (listen === null) return;
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response.writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8' }).end(path === '/metrics' ? 'method not allowed\n' : 'not found\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
        (error: unknown) => {
          // A scrape that could not read the database: Prometheus marks the target down for it.
          this.logger.warn(`scrape failed: ${error instanceof Error ? error.message : String(error)}`);
          response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
