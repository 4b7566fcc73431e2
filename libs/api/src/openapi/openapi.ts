import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { DeclaredErrorBody, InvalidInputBody, RequestFailedBody } from '../errors/error-bodies';

/** Builds the OpenAPI 3.1 document from the controllers and serves it with Swagger UI. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('OpenBot API')
    .setDescription(
      'Headless API of OpenBot, a self-hosted platform for running AI agents durably. ' +
        'Authenticate with `Authorization: Bearer <API key>`; platform routes take the administrator token. ' +
        'Errors: declared errors carry `{ type, message }` (400 adds `issues`); server faults answer ' +
        '`RequestFailed` with `category` and `errorId`, also sent as the `openbot-error-id` header. ' +
        'Lists are paginated with `?after=&limit=` and answer `{ data, next }`.',
    )
    .setVersion('0.1.0')
    // Not addBearerAuth: it declares `bearerFormat: JWT`, and neither credential is a JWT (decision 069).
    .addSecurity('bearer', {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key (`obk_<key ID>_<secret>`, as created; an opaque random value, not a JWT: nothing in it decodes, the server looks it up) ' +
        'or, on platform routes, the administrator token (`OPENBOT_ADMIN_TOKEN`). Sent as `Authorization: Bearer <credential>`.',
    })
    .addCookieAuth('openbot_session', {
      type: 'apiKey',
      in: 'cookie',
      description: 'The same-origin session after SSO login; unsafe methods also send its CSRF token as `x-csrf-token`',
    })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [DeclaredErrorBody, InvalidInputBody, RequestFailedBody],
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  declareIdParameters(document);
  return document;
}

/** A path parameter named `id` or `<thing>Id` is a resource ID: a UUID (a malformed one answers 404, like an unknown one). */
const ID_PARAMETER = /^(id|[a-z][A-Za-z]*Id)$/;

/** Declares every resource-ID path parameter as `format: uuid`, so clients and fuzzers see which segments are IDs. */
function declareIdParameters(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.delete, item.patch]) {
      for (const parameter of operation?.parameters ?? []) {
        if ('in' in parameter && parameter.in === 'path' && ID_PARAMETER.test(parameter.name)) parameter.schema = { type: 'string', format: 'uuid' };
      }
    }
  }
}

export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    customSiteTitle: 'OpenBot API',
  });
}
