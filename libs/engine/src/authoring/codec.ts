import type { Json } from './workflow';

/**
 * Stored JSON that does not have the shape its codec expects: a failure of the execution that
 * stored it (CALL-07), never cast into the type it should have had.
 */
export class InvalidStoredJson extends Error {
  override readonly name = 'InvalidStoredJson';
  constructor(
    /** Where in the value, e.g. `state.bot.tools[2].name` (empty: the value itself). */
    readonly path: string,
    readonly expected: string,
  ) {
    super(`the stored JSON${path === '' ? '' : ` at ${path}`} is not ${expected}`);
  }
}

/**
 * How one type is stored: `encode` turns a value into the JSON the engine seals, `decode` checks
 * stored JSON and answers the value, or throws InvalidStoredJson naming the first wrong place.
 * Methods (not function properties) on purpose: a `Codec<ToolCall>` then also serves where a
 * `Codec<unknown>` is expected, as in a record of codecs.
 */
export interface Codec<T> {
  encode(value: T): Json;
  decode(json: Json, path?: string): T;
}

/** The type a codec decodes to. */
export type Decoded<C> = C extends Codec<infer T> ? T : never;

/** An object field that may be absent (see `object`). */
export interface OptionalCodec<T> extends Codec<T> {
  readonly optional: true;
}

type Fields = Readonly<Record<string, Codec<unknown>>>;
type RequiredKeys<F> = { [K in keyof F]: F[K] extends OptionalCodec<unknown> ? never : K }[keyof F];
type OptionalKeys<F> = { [K in keyof F]: F[K] extends OptionalCodec<unknown> ? K : never }[keyof F];
type Simplify<T> = { [K in keyof T]: T[K] };
/** The value type of `object(fields)`: readonly, with `optional` fields as optional properties. */
export type ObjectOf<F> = Simplify<{ readonly [K in RequiredKeys<F>]: Decoded<F[K]> } & { readonly [K in OptionalKeys<F>]?: Decoded<F[K]> }>;

function fail(path: string, expected: string): never {
  throw new InvalidStoredJson(path, expected);
}

function isRecord(json: Json): json is { [key: string]: Json } {
  return json !== null && typeof json === 'object' && !Array.isArray(json);
}

const at = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

export const string: Codec<string> = {
  encode: (value) => value,
  decode: (json, path = '') => (typeof json === 'string' ? json : fail(path, 'a string')),
};

export const number: Codec<number> = {
  encode: (value) => value,
  decode: (json, path = '') => (typeof json === 'number' && Number.isFinite(json) ? json : fail(path, 'a number')),
};

export const boolean: Codec<boolean> = {
  encode: (value) => value,
  decode: (json, path = '') => (typeof json === 'boolean' ? json : fail(path, 'a boolean')),
};

/** Any JSON, as it is: for values the feature does not look into (an endpoint's answer). */
export const json: Codec<Json> = {
  encode: (value) => value,
  decode: (value) => value,
};

/**
 * A JSON object typed as a plain record (a JSON schema, say): encoding walks it and refuses what
 * JSON cannot hold, so nothing is stored that would not read back the same.
 */
export const jsonObject: Codec<Readonly<Record<string, unknown>>> = {
  encode: (value) => toJson(value, ''),
  decode: (value, path = '') => (isRecord(value) ? value : fail(path, 'an object')),
};

function toJson(value: unknown, path: string): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : fail(path, 'a finite number');
  if (Array.isArray(value)) return value.map((item: unknown, i) => toJson(item, `${path}[${i}]`));
  if (typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = toJson(item, at(path, key));
    return out;
  }
  return fail(path, 'JSON');
}

/** One of the given strings. */
export function oneOf<const V extends string>(values: readonly V[]): Codec<V> {
  const allowed: ReadonlySet<string> = new Set(values);
  const is = (value: Json): value is V => typeof value === 'string' && allowed.has(value);
  return {
    encode: (value) => value,
    decode: (value, path = '') => (is(value) ? value : fail(path, `one of ${values.join(', ')}`)),
  };
}

export function nullable<T>(inner: Codec<T>): Codec<T | null> {
  return {
    encode: (value) => (value === null ? null : inner.encode(value)),
    decode: (value, path = '') => (value === null ? null : inner.decode(value, path)),
  };
}

/** A field of `object` that may be absent: absent stays absent (it is not stored as null). */
export function optional<T>(inner: Codec<T>): OptionalCodec<T> {
  return { optional: true, encode: (value) => inner.encode(value), decode: (value, path) => inner.decode(value, path) };
}

export function array<T>(item: Codec<T>): Codec<readonly T[]> {
  return {
    encode: (values) => values.map((value) => item.encode(value)),
    decode: (value, path = '') => (Array.isArray(value) ? value.map((entry, i) => item.decode(entry, `${path}[${i}]`)) : fail(path, 'an array')),
  };
}

/**
 * An object with exactly these fields: encoding writes only them (in this order), decoding
 * checks each one. Annotate the result with the feature's own interface
 * (`const call: Codec<ToolCall> = object({...})`): the compiler then checks that every required
 * field of the interface has its codec.
 */
export function object<F extends Fields>(fields: F): Codec<ObjectOf<F>>;
export function object(fields: Fields): Codec<Readonly<Record<string, unknown>>> {
  const entries = Object.entries(fields);
  return {
    encode(value) {
      const out: { [key: string]: Json } = {};
      for (const [key, codec] of entries) {
        const item = value[key];
        if (item !== undefined) out[key] = codec.encode(item);
      }
      return out;
    },
    decode(value, path = '') {
      if (!isRecord(value)) return fail(path, 'an object');
      const out: Record<string, unknown> = {};
      for (const [key, codec] of entries) {
        const item = value[key];
        if (item === undefined) {
          if ('optional' in codec) continue;
          return fail(at(path, key), 'present');
        }
        out[key] = codec.decode(item, at(path, key));
      }
      return out;
    },
  };
}

/**
 * Remembers which value each encoded JSON came from, so decoding JSON this node just encoded
 * (the state a phase returned, a result it just got) answers that value without checking it
 * again. JSON read from storage is not in it: that is always checked.
 */
export function remembered<T>(codec: Codec<T>): Codec<T> {
  const values = new WeakMap<object, T>();
  return {
    encode(value) {
      const encoded = codec.encode(value);
      if (encoded !== null && typeof encoded === 'object') values.set(encoded, value);
      return encoded;
    },
    decode(value, path) {
      if (value !== null && typeof value === 'object') {
        const known = values.get(value);
        if (known !== undefined) return known;
        const decoded = codec.decode(value, path);
        values.set(value, decoded);
        return decoded;
      }
      return codec.decode(value, path);
    },
  };
}
