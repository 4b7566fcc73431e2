import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { newId } from '@openbot/domain';
import { OpenbotModule, type MigrationClass, type RuntimeConfig } from '@openbot/openbot';
import { Logger, LoggerModule } from 'nestjs-pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DestinationStream } from 'pino';
import { ApiModule } from './api.module';
import { RouteIndex } from './errors/route-index';
import { buildOpenApiDocument, serveOpenApi } from './openapi/openapi';

export interface HttpAppOptions {
  readonly config: RuntimeConfig;
  readonly migrations: ReadonlyArray<MigrationClass>;
  /** Where JSON log lines go (default: stdout). Tests capture them here. */
  readonly logDestination?: DestinationStream;
  /** Extra modules composed into the app (tests add probe controllers). */
  readonly imports?: ModuleMetadata['imports'];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds one node's HTTP application: Nest on Fastify, the product modules, the API,
 * structured logs with request IDs, and the OpenAPI document. Listening is the caller's step.
 */
export async function createHttpApp(options: HttpAppOptions): Promise<NestFastifyApplication> {
  const { config } = options;
  const routes = new RouteIndex();
  const root = rootModule(options, routes);
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimit,
    // Idle keep-alive sockets close at shutdown; in-flight requests finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  const fastify = adapter.getInstance();
  // Only JSON bodies are accepted: a text body where JSON is expected is 415, not a string.
  fastify.removeContentTypeParser(['text/plain']);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, { bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(Logger));
  serveOpenApi(app, buildOpenApiDocument(app));
  await app.init();
  return app;
}

function rootModule(options: HttpAppOptions, routes: RouteIndex): DynamicModule {
  @Module({})
  class OpenbotHttpModule {}
  return {
    module: OpenbotHttpModule,
    imports: [
      LoggerModule.forRoot({
        pinoHttp: [
          {
            level: options.config.logLevel,
            genReqId: (req: IncomingMessage, res: ServerResponse) => {
              const given = req.headers['x-request-id'];
              const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : newId();
              res.setHeader('x-request-id', id);
              return id;
            },
            // Never log headers (credentials) or bodies; errors are logged by the boundary as IDs only.
            serializers: {
              req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
              err: () => undefined,
            },
            customAttributeKeys: { reqId: 'reqId' },
            quietReqLogger: true,
          },
          options.logDestination ?? process.stdout,
        ],
      }),
      OpenbotModule.forRoot({ config: options.config, migrations: options.migrations }),
      ApiModule.forRoot(routes),
      ...(options.imports ?? []),
    ],
  };
}
