import fastifyCookie from '@fastify/cookie';
import fastifyMultipart from '@fastify/multipart';
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { newId } from '@openbot/domain';
import { OpenbotModule } from '@openbot/features';
import { logFormatFor, OpenbotMetrics, OpenbotTracing, type HttpSpan, type MigrationClass, type RuntimeConfig } from '@openbot/platform';
import { Logger, LoggerModule } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import type { RawServerDefault } from 'fastify';
import type { DestinationStream } from 'pino';
import pinoPretty from 'pino-pretty';
import { ApiModule } from './api.module';
import { classifyError } from './errors/classify-error';
import { RouteIndex } from './errors/route-index';
import { addSecurityHeaders, securityHeaders, type HeaderReply } from './security-headers';
import { buildOpenApiDocument, serveOpenApi } from './openapi/openapi';
import { installRequestTimeouts } from './request-timeouts';

export interface HttpAppOptions {
  readonly config: RuntimeConfig;
  readonly migrations: ReadonlyArray<MigrationClass>;
  /** Where JSON log lines go (default: stdout, pretty-printed when `logFormatFor` says so). Tests capture them here. */
  readonly logDestination?: DestinationStream;
  /** Extra modules composed into the app (tests add probe controllers). */
  readonly imports?: ModuleMetadata['imports'];
}

/** The part of Fastify's reply a router-level error answer uses (two Fastify type copies are installed). */
interface FrameworkErrorReply extends HeaderReply {
  code(statusCode: number): unknown;
  headers(values: Record<string, string>): unknown;
  send(payload?: unknown): unknown;
}

/** The one route that reads a multipart body (a file upload). */
const UPLOAD_ROUTE = '/v1/files';

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
    // `request.ip` is the client's address, the key of the per-address limits (docs/decisions/017):
    // X-Forwarded-For counts only when the connection comes from a configured proxy.
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    // One request ID for Fastify, the logs and the response: the caller's x-request-id when sane.
    requestIdHeader: false,
    genReqId: (req: IncomingMessage) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId();
    },
    // The router rejects a malformed URL (bad percent-encoding) before any Nest handler runs:
    // answer it in the declared error shape instead of Fastify's own body (docs/http-api.md "Errors").
    frameworkErrors: (error: unknown, _request: unknown, reply: FrameworkErrorReply) => {
      const decision = classifyError(error);
      if (decision.kind !== 'declared') return void reply.send(error);
      reply.code(decision.status);
      reply.headers(decision.headers ?? {});
      // The router answers before any hook runs: the headers of every answer are set here (decision 069).
      addSecurityHeaders(reply);
      reply.send(decision.body);
    },
  });
  const fastify = adapter.getInstance();
  fastify.addHook('onRequest', (request, reply, done) => {
    (request.raw as IncomingMessage & { id?: string }).id = request.id;
    void reply.header('x-request-id', request.id);
    done();
  });
  // nosniff, no-store and frame-ancestors on every answer unless a route sets its own (decision 069).
  fastify.addHook('onSend', securityHeaders);
  // Multipart bodies belong to the file upload alone: anywhere else they are 415 like any non-JSON body.
  fastify.addHook('onRequest', (request, reply, done) => {
    const type = request.headers['content-type'];
    if (typeof type !== 'string' || !/^multipart\/form-data\b/i.test(type.trim())) return done();
    if (request.method === 'POST' && request.routeOptions.url === UPLOAD_ROUTE) return done();
    const decision = classifyError(Object.assign(new Error('multipart body outside the upload route'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }));
    if (decision.kind !== 'declared') return done();
    void reply.code(decision.status).headers(decision.headers ?? {}).send(decision.body);
  });
  installRequestTimeouts(fastify, config, UPLOAD_ROUTE);
  // Only JSON bodies are accepted: a text body where JSON is expected is 415, not a string.
  fastify.removeContentTypeParser(['text/plain']);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  // Request latency by route pattern (decision 034): added only when metrics are on, so they cost nothing when off.
  let metrics: OpenbotMetrics | null = null;
  if (config.metrics !== null) {
    fastify.addHook('onResponse', (request, reply, done) => {
      // The route's pattern (`/v1/chats/:id`), never the raw path: an ID is never a label value.
      metrics?.httpRequest({ method: request.method, route: request.routeOptions.url ?? 'unmatched', statusCode: reply.statusCode, seconds: reply.elapsedTime / 1000 });
      done();
    });
  }
  // A span per request (decision 040), named by the route pattern: added only when traces are on.
  let tracing: OpenbotTracing | null = null;
  if (config.traces !== null) {
    const spans = new WeakMap<object, HttpSpan>();
    fastify.addHook('onRequest', (request, _reply, done) => {
      if (tracing !== null) spans.set(request, tracing.httpRequest(request.method, request.routeOptions.url ?? 'unmatched', request.headers));
      done();
    });
    fastify.addHook('onResponse', (request, reply, done) => {
      spans.get(request)?.end(reply.statusCode);
      done();
    });
  }
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, { bufferLogs: true, abortOnError: false });
  if (config.metrics !== null) metrics = app.get(OpenbotMetrics);
  if (config.traces !== null) tracing = app.get(OpenbotTracing);
  app.useLogger(app.get(Logger));
  // Cookies for SSO sessions (`request.cookies`, `reply.setCookie`). passport runs inside the SSO
  // use cases on a captured response, so Fastify's reply needs no Node-style shims.
  await app.register(fastifyCookie as unknown as Parameters<NestFastifyApplication['register']>[0]);
  // File uploads (POST /v1/files) read their one part as a stream; the route sets the per-request limits.
  await app.register(fastifyMultipart as unknown as Parameters<NestFastifyApplication['register']>[0], { throwFileSizeLimit: true });
  // A JSON content type with an empty body (what `curl -X POST -H 'content-type: application/json'`
  // sends) is no body: a route without one (`POST /v1/chats/{id}/stop`) runs, and a route that needs
  // one answers 400 naming what is missing. Any other body is parsed by Fastify's own JSON parser.
  const json = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit: config.bodyLimit }, (request, body, done) => {
    if (body.length === 0) return void done(null, undefined);
    void json(request, body.toString('utf8'), done);
  });
  serveOpenApi(app, buildOpenApiDocument(app));
  await app.init();
  // Nest adds a form (urlencoded) parser at init; a form body where JSON is expected is 415 too (docs/http-api.md "Errors").
  fastify.removeContentTypeParser(['application/x-www-form-urlencoded']);
  return app;
}

function pathOnly(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
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
            genReqId: (req: IncomingMessage) => {
              const id = (req as IncomingMessage & { id?: unknown }).id;
              return typeof id === 'string' ? id : newId();
            },
            // Never log headers (credentials) or bodies; errors are logged by the boundary as IDs only.
            serializers: {
              // The path only: a query can carry secrets (the SSO callback's `code` and `state`).
              req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: pathOnly(req.url) }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
              err: () => undefined,
            },
            customAttributeKeys: { reqId: 'reqId' },
            quietReqLogger: true,
          },
          options.logDestination ?? stdoutLogDestination(options.config),
        ],
      }),
      OpenbotModule.forRoot({ config: options.config, migrations: options.migrations }),
      ApiModule.forRoot(routes),
      ...(options.imports ?? []),
    ],
  };
}

/**
 * Standard output as the log stream: JSON lines, or pino-pretty's lines for a person reading a
 * terminal (LOG_FORMAT, docs/operating.md). Pretty printing runs in this process and writes synchronously,
 * so no line is lost when the process exits; it is a development convenience, not a production path.
 */
function stdoutLogDestination(config: RuntimeConfig): DestinationStream {
  if (logFormatFor(config, process.stdout.isTTY === true) === 'json') return process.stdout;
  return pinoPretty({
    destination: 1,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // Nest's own lines name their source in `context`: shown before the message instead of as a field.
    messageFormat: '{if context}{context}: {end}{msg}',
    ignore: 'pid,hostname,context',
    singleLine: true,
  });
}
