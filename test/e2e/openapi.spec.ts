import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * PLAT-01: every route the app serves is in the OpenAPI 3.1 document, with its success schema,
 * and the error shapes of docs/http-api.md are published as components.
 */

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
  parameters?: Array<{ name: string; in: string }>;
  security?: unknown[];
  deprecated?: boolean;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The routes the brief's other e2e specs exercise: the public surface so far. */
const KNOWN_ROUTES = [
  'GET /healthz',
  'GET /readyz',
  'GET /v1/organizations',
  'POST /v1/organizations',
  'GET /v1/api-keys',
  'POST /v1/api-keys',
  'DELETE /v1/api-keys/{id}',
  'GET /v1/me',
];

function joinPath(...parts: string[]): string {
  const joined = `/${parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p !== '').join('/')}`;
  return joined.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every route Nest's controllers register in this app, as `METHOD /path/{param}`. */
function servedRoutes(t: TestApp): string[] {
  const routes = new Set<string>();
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const base = Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || method === undefined) continue;
        for (const b of [base ?? ''].flat()) {
          for (const p of [path].flat()) routes.add(`${RequestMethod[method]} ${joinPath(b, p)}`);
        }
      }
    }
  }
  return [...routes].sort();
}

/** Documentation routes themselves (Swagger UI and the document) are not part of the API. */
const DOCUMENTATION_PATH = /^\/(docs(\/.*)?|openapi\.(json|yaml))$/;

/**
 * Every route Fastify itself serves, read from its route tree (`printRoutes`), so a route added
 * outside a Nest controller is caught too. HEAD routes Fastify adds for GET are left out.
 */
function fastifyRoutes(t: TestApp): string[] {
  const tree = t.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes = new Set<string>();
  for (const line of tree.split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match || match[2] === undefined) continue;
    const depth = Math.max(1, Math.round(match[1]!.length / 4));
    const path = `${depth > 1 ? stack[depth - 2]! : ''}${match[2]}`;
    stack[depth - 1] = path;
    stack.length = depth;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (method === '' || method === 'HEAD') continue;
      const normalized = path.replace(/\/+$/, '') || '/';
      if (!DOCUMENTATION_PATH.test(normalized)) routes.add(`${method} ${joinPath(normalized)}`);
    }
  }
  return [...routes].sort();
}

function documentedRoutes(doc: OpenApiDocument): string[] {
  const routes: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) if (HTTP_METHODS.includes(method)) routes.push(`${method.toUpperCase()} ${path}`);
  }
  return routes.sort();
}

function resolve(doc: OpenApiDocument, schema: Record<string, unknown>): Record<string, unknown> {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const target = doc.components.schemas[name];
  expect({ ref, found: target !== undefined }).toEqual({ ref, found: true });
  return target as Record<string, unknown>;
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/json/);
    doc = res.body as OpenApiDocument;
  });
  afterAll(async () => {
    await t.close();
  });

  it('[PLAT-01] GET /openapi.json is an OpenAPI 3.1.0 document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
  });

  it('[PLAT-01] documents every route the other specs use', () => {
    expect(documentedRoutes(doc)).toEqual(expect.arrayContaining(KNOWN_ROUTES));
  });

  it('[PLAT-01] documents exactly the routes the app serves, no more, no less', () => {
    const served = servedRoutes(t);
    expect(served).toEqual(expect.arrayContaining(KNOWN_ROUTES));
    expect(documentedRoutes(doc)).toEqual(served);
  });

  it('[PLAT-01] Fastify serves no route that the document leaves out', () => {
    const served = fastifyRoutes(t);
    expect(served).toEqual(expect.arrayContaining(KNOWN_ROUTES));
    expect(served).toEqual(documentedRoutes(doc));
  });

  it('[PLAT-01] every documented route is really served (none answers RouteNotFound)', async () => {
    for (const route of documentedRoutes(doc)) {
      const [method, path] = route.split(' ') as [string, string];
      const url = path.replace(/\{[^}]+\}/g, '0190c3f0-1234-7abc-8def-0123456789ab');
      const res = await t.http()[method.toLowerCase() as 'get'](url);
      expect({ route, type: (res.body as { type?: string }).type }).not.toEqual({ route, type: 'RouteNotFound' });
      expect({ route, type: (res.body as { type?: string }).type }).not.toEqual({ route, type: 'MethodNotAllowed' });
    }
  });

  it('[PLAT-01] every operation has a success response; each one with a body has a JSON schema that resolves', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!HTTP_METHODS.includes(method)) continue;
        // A redirect (the SSO login and callback) and 204 No Content succeed without a body.
        const bodiless = Object.keys(operation.responses ?? {}).filter((status) => status === '204' || status === '302');
        const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status) && status !== '204');
        if (bodiless.length > 0 && success.length === 0) continue;
        // A retired route (deprecated, kept only to answer an error: the shared SSO callback's 404) has no success by design.
        if (operation.deprecated === true && Object.keys(operation.responses ?? {}).every((status) => /^[45]\d\d$/.test(status))) continue;
        expect({ route: `${method} ${path}`, successResponses: success.length > 0 }).toEqual({
          route: `${method} ${path}`,
          successResponses: true,
        });
        for (const [status, response] of success) {
          // A download (a file's bytes) answers a binary body instead of JSON.
          const binary = response.content?.['application/octet-stream']?.schema as { type?: string; format?: string } | undefined;
          if (binary !== undefined && response.content?.['application/json'] === undefined) {
            expect({ route: `${method} ${path}`, binary }).toEqual({ route: `${method} ${path}`, binary: { type: 'string', format: 'binary' } });
            continue;
          }
          const schema = response.content?.['application/json']?.schema;
          expect({ route: `${method} ${path}`, status, hasSchema: schema !== undefined }).toEqual({
            route: `${method} ${path}`,
            status,
            hasSchema: true,
          });
          const resolved = resolve(doc, schema!);
          expect(resolved.type === 'object' || resolved.properties !== undefined).toBe(true);
        }
      }
    }
  });

  it('[PLAT-01] the success statuses match what the routes answer', () => {
    const statuses = (route: string): string[] => {
      const [method, path] = route.split(' ') as [string, string];
      return Object.keys(doc.paths[path]?.[method.toLowerCase()]?.responses ?? {}).filter((s) => /^2\d\d$/.test(s));
    };
    expect(statuses('POST /v1/organizations')).toEqual(['201']);
    expect(statuses('POST /v1/api-keys')).toEqual(['201']);
    expect(statuses('GET /v1/organizations')).toEqual(['200']);
    expect(statuses('GET /v1/api-keys')).toEqual(['200']);
    expect(statuses('DELETE /v1/api-keys/{id}')).toEqual(['200']);
    expect(statuses('GET /v1/me')).toEqual(['200']);
  });

  it('[PLAT-01] components include the error schemas of docs/http-api.md', () => {
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['RequestFailedBody', 'InvalidInputBody', 'DeclaredErrorBody']));
    expect(Object.keys(schemas.RequestFailedBody!.properties ?? {}).sort()).toEqual(['category', 'errorId', 'type']);
    expect(Object.keys(schemas.DeclaredErrorBody!.properties ?? {}).sort()).toEqual(['message', 'type']);
    expect(Object.keys(schemas.InvalidInputBody!.properties ?? {})).toEqual(expect.arrayContaining(['issues']));
  });

  it('[PLAT-01] list routes document the after/limit page parameters', () => {
    for (const path of ['/v1/organizations', '/v1/api-keys']) {
      const names = (doc.paths[path]!.get!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect({ path, names }).toEqual({ path, names: expect.arrayContaining(['after', 'limit']) });
    }
  });

  it('[PLAT-01] the documented success schemas match real response bodies', async () => {
    const properties = (route: string, status: string): string[] => {
      const [method, path] = route.split(' ') as [string, string];
      const schema = doc.paths[path]![method.toLowerCase()]!.responses![status]!.content!['application/json']!.schema!;
      return Object.keys(resolve(doc, schema).properties ?? {}).sort();
    };
    const created = await t.http().post('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).send({ name: 'Doc' }).expect(201);
    expect(Object.keys(created.body as object).sort()).toEqual(properties('POST /v1/organizations', '201'));
    const secret = (created.body as { apiKey: { secret: string } }).apiKey.secret;
    const me = await t.http().get('/v1/me').set('authorization', `Bearer ${secret}`).expect(200);
    expect(Object.keys(me.body as object).sort()).toEqual(properties('GET /v1/me', '200'));
    const key = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${secret}`).send({ name: 'doc' }).expect(201);
    expect(Object.keys(key.body as object).sort()).toEqual(properties('POST /v1/api-keys', '201'));
    const list = await t.http().get('/v1/api-keys').set('authorization', `Bearer ${secret}`).expect(200);
    expect(Object.keys(list.body as object).sort()).toEqual(properties('GET /v1/api-keys', '200'));
    const revoked = await t.http().delete(`/v1/api-keys/${(key.body as { id: string }).id}`).set('authorization', `Bearer ${secret}`).expect(200);
    expect(Object.keys(revoked.body as object).sort()).toEqual(properties('DELETE /v1/api-keys/{id}', '200'));
    const orgs = await t.http().get('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).expect(200);
    expect(Object.keys(orgs.body as object).sort()).toEqual(properties('GET /v1/organizations', '200'));
    const ready = await t.http().get('/readyz').expect(200);
    expect(Object.keys(ready.body as object).sort()).toEqual(properties('GET /readyz', '200'));
  });

  it('[PLAT-01] the bearer scheme describes API keys as they are: opaque values, not JWTs (no bearerFormat JWT)', async () => {
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer', description: expect.stringContaining('not a JWT') });
    expect(doc.components.securitySchemes.bearer!.description).toContain('`obk_<key ID>_<secret>`');
    // An API key as the server makes it has no JWT shape (three base64url parts split by dots), and it authenticates.
    const { secret } = await t.createOrganization('Scheme');
    expect(secret).toMatch(/^obk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    expect(secret.split('.')).toHaveLength(1);
    await t.http().get('/v1/me').set('authorization', `Bearer ${secret}`).expect(200);
  });

  it("[PLAT-01] a Bot tool's kind documents the http tool's wire format: what OpenBot POSTs and what it reads back", () => {
    const kind = (doc.components.schemas.BotToolInput as { properties: Record<string, { description?: string }> }).properties.kind!.description!;
    for (const part of ['`{ callId, name, arguments }`', '`content-type: application/json`', '`Idempotency-Key`', 'the same on every attempt', '`modelOutput`', 'the raw answer as text']) {
      expect({ part, documented: kind.includes(part) }).toEqual({ part, documented: true });
    }
  });

  it('[PLAT-01] GET /docs serves the Swagger UI as HTML', async () => {
    const res = await t.http().get('/docs').redirects(2);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/swagger/i);
  });
});
