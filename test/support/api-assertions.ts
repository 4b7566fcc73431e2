import type { Response } from 'supertest';
import { bearer } from './chat-fixture';
import type { TestApp } from './test-app';

/**
 * Assertions and small setup steps shared by the e2e specs of the HTTP API (docs/http-api.md "Errors",
 * resource IDs and timestamps), so that every spec checks a declared error the same way.
 */

/** A UUID v7, the form of every ID the API mints. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Any UUID (lowercase, dashed), whatever its version: error IDs and execution IDs. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An ISO 8601 UTC timestamp with milliseconds, as the API writes `createdAt` and `updatedAt`. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A well-formed UUID v7 that names no row of any table. */
export const UNKNOWN_ID = '0190c3f0-1234-7abc-8def-0123456789ab';

/** A declared error: `status`, exactly `type` and `message` (InvalidInput adds `issues`), `message` a string. */
export function expectDeclared(res: Response, status: number, type: string): void {
  expect({ status: res.status, type: (res.body as { type?: unknown }).type }).toEqual({ status, type });
  const keys = type === 'InvalidInput' ? ['issues', 'message', 'type'] : ['message', 'type'];
  expect(Object.keys(res.body as object).sort()).toEqual(keys);
  expect(typeof (res.body as { message: unknown }).message).toBe('string');
}

/** {@link expectDeclared}, and no `openbot-error-id` header: a declared error is no server fault. */
export function expectDeclaredNoErrorId(res: Response, status: number, type: string): void {
  expectDeclared(res, status, type);
  expect(res.headers['openbot-error-id']).toBeUndefined();
}

/**
 * {@link expectDeclared} at its strictest (the error contract itself): a JSON content type, no
 * `openbot-error-id` header, and every InvalidInput issue exactly `{ path, message }`, both strings.
 */
export function expectDeclaredStrict(res: Response, status: number, type: string): void {
  expectDeclared(res, status, type);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['openbot-error-id']).toBeUndefined();
  if (type === 'InvalidInput') {
    for (const issue of (res.body as { issues: Array<Record<string, unknown>> }).issues) {
      expect(Object.keys(issue).sort()).toEqual(['message', 'path']);
      expect(typeof issue.path).toBe('string');
      expect(typeof issue.message).toBe('string');
    }
  }
}

/** The `path` of every issue of an InvalidInput answer, in order (none when the body has no `issues`). */
export function issuePaths(res: Response): string[] {
  return ((res.body as { issues?: Array<{ path: string }> }).issues ?? []).map((i) => i.path);
}

/** Adds an `openai-compatible` model provider `name` to the organization of the key `secret` (base URL 127.0.0.1:9, never called). */
export async function addProvider(t: TestApp, secret: string, name: string): Promise<void> {
  await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send({ name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
}
