import type { Readable } from 'node:stream';

/**
 * The object-store port (ARCH-04, PLAT-03): file bytes live here, their metadata in PostgreSQL.
 * Two adapters implement it, the filesystem under the data dir (the embedded default) and S3;
 * one contract suite (test/integration/object-store) holds both to the same behaviour.
 *
 * Keys are chosen by the platform, never by a user: `[A-Za-z0-9._-]` segments joined by `/`.
 */
export interface ObjectStore {
  /** Which adapter this is (`fs` or `s3`), for logs and health. */
  readonly kind: 'fs' | 's3';
  /**
   * Streams `body` into the object `key` (replacing one that exists). The bytes are read as they
   * come, never gathered whole in memory. The object appears only when every byte is stored: a
   * failed or aborted write leaves no object (and no partial one under `key`).
   */
  put(key: string, body: Readable, options?: { readonly contentType?: string; readonly signal?: AbortSignal }): Promise<StoredObject>;
  /** The object's bytes as a stream; throws ObjectNotFound when there is none. */
  get(key: string): Promise<Readable>;
  /** The object's size, or null when there is none. */
  head(key: string): Promise<StoredObject | null>;
  /**
   * Up to `limit` keys under `prefix` (a key prefix ending in `/`), in key order: what a sweep
   * deletes page by page (an organization's objects when it is deleted). Partial writes never show.
   */
  list(prefix: string, limit: number): Promise<string[]>;
  /** Removes the object; removing one that is not there succeeds (so a retried delete is safe). */
  delete(key: string): Promise<void>;
  /** Releases connections (at shutdown). */
  close(): Promise<void>;
}

export interface StoredObject {
  readonly bytes: number;
}

export const OBJECT_STORE = Symbol('ObjectStore');

export class ObjectNotFound extends Error {
  constructor(readonly key: string) {
    super(`object ${key} does not exist`);
  }
}

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** Refuses a prefix that is not a key shape followed by `/`. */
export function checkObjectPrefix(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Error(`invalid object key prefix "${prefix}"`);
  checkObjectKey(prefix.slice(0, -1));
  return prefix;
}

/** Refuses a key outside the platform's own shape (a path traversal can never reach an adapter). */
export function checkObjectKey(key: string): string {
  if (key.length > 512 || !KEY.test(key) || key.split('/').some((segment) => segment === '.' || segment === '..' || segment.startsWith('.'))) {
    throw new Error(`invalid object key "${key}"`);
  }
  return key;
}
