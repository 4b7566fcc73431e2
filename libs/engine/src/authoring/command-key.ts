import { createHash } from 'node:crypto';
import type { Json } from './workflow';

/** The same JSON value gives the same hash whatever its key order (docs/http-api.md "Idempotency"). */
export function inputHash(value: Json | undefined): Buffer {
  return createHash('sha256').update(canonical(value ?? null)).digest();
}

function canonical(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(',')}}`;
}
