import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { PACED_FROM_STREAMS, READ_PACE_MS } from '@openbot/core';
import { parsePreRegisteredClients, type PreRegisteredOAuthClient } from './app-oauth-clients';

/** A configuration value that stops the process at boot; the message names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`${variable}: ${detail}`);
  }
}

export interface MasterKey {
  readonly id: string;
  readonly key: Buffer;
}

export interface S3Config {
  readonly endpoint: string | null;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string | null;
  readonly secretAccessKey: string | null;
  readonly forcePathStyle: boolean;
}

export interface FilesConfig {
  /** `OPENBOT_FILE_MAX_BYTES`: the largest file accepted (413 above). */
  readonly maxBytes: number;
  /**
   * `OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS`: an upload still running after this long is cut off; the
   * bytes of one that never committed (a crash) are removed after it by recovery.
   */
  readonly uploadTimeoutSeconds: number;
}

export interface RetentionDefaults {
  readonly textDeltaDays: number;
  readonly callPayloadDays: number;
  readonly schedule: string;
  /**
   * `OPENBOT_RETENTION_MAX_DAYS`: the operator's ceiling on every retention (docs/decisions/074).
   * An organization may not set more, and a setting saved under a higher ceiling applies as this.
   */
  readonly maxDays: number;
}

/** The longest retention a setting may name, in days (ten years). */
export const MAX_RETENTION_DAYS = 3650;

/** The whole configuration, parsed once at boot (docs/operating.md "Configuration"). */
export interface Config {
  readonly production: boolean;
  readonly host: string;
  readonly port: number;
  /** null: start the embedded PostgreSQL under `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** null: generated into the data dir (development) or platform routes disabled (production). */
  readonly adminToken: string | null;
  /** null: generated into the data dir in development; refused in production. */
  readonly masterKey: MasterKey | null;
  readonly oldMasterKeys: readonly MasterKey[];
  // ---- egress (decisions 008 and 016) ----
  /** Hosts, addresses and CIDRs organization-supplied URLs may reach although not global unicast. */
  readonly egressAllow: readonly string[];
  /** true: `OPENBOT_EGRESS_ALLOW` is unset outside production, so loopback is allowed by default. */
  readonly egressLoopbackByDefault: boolean;
  /** Largest HTTP tool answer read, in bytes. */
  readonly egressToolAnswerLimit: number;
  /** Largest provider error body, OpenID document, key set, token or userinfo answer read, in bytes. */
  readonly egressDocumentLimit: number;
  /** `OPENBOT_EGRESS_CA_FILE`: extra trusted CA certificates (PEM) for HTTPS egress, besides the system's; null: none. */
  readonly egressCaFile: string | null;
  // ---- end of egress ----
  readonly objectStore: { readonly kind: 'fs' } | ({ readonly kind: 's3' } & S3Config);
  /** Files (docs/decisions/028): the largest upload, and how long one upload may take before it is abandoned. */
  readonly files: FilesConfig;
  readonly nodeId: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `LOG_FORMAT`: `auto` picks by environment and terminal (see `logFormatFor`), or forced `json` / `pretty`. */
  readonly logFormat: LogFormatSetting;
  /** Largest accepted request body in bytes. */
  readonly bodyLimit: number;
  /**
   * `OPENBOT_BODY_TIMEOUT_SECONDS`: a request's headers, and then its body, must each arrive
   * within this long or the connection is closed (docs/decisions/074). Responses (event streams,
   * long polls) are not limited by it; file uploads have `files.uploadTimeoutSeconds`.
   */
  readonly bodyTimeoutSeconds: number;
  /** How long graceful shutdown waits for in-flight work before giving up, in ms. */
  readonly shutdownTimeoutMs: number;
  /** Execution lease length in seconds: a dead node's work is taken over after about this long. */
  readonly leaseSeconds: number;
  /** `OPENBOT_DATABASE_POOL_SIZE`: connections of the node's pool for requests and workflows. */
  readonly databasePoolSize: number;
  /** `OPENBOT_MAX_DELEGATION_DEPTH`: how deep tasks may nest (a task of a task …); a deeper delegate call gets an error result. */
  readonly maxDelegationDepth: number;
  /** `OPENBOT_APP_CALL_TIMEOUT`: seconds an App tool call waits for its answer (progress restarts the clock); then it is a lost answer. */
  readonly appCallTimeoutSeconds: number;
  /** `OPENBOT_APP_SESSION_IDLE_SECONDS`: how long an open MCP session (a physical scope) waits for another call before it is closed. */
  readonly appSessionIdleSeconds: number;
  /** `OPENBOT_APP_OAUTH_CLIENTS`: OAuth clients pre-registered at App authorization servers (decision 038). */
  readonly appOAuthClients: readonly PreRegisteredOAuthClient[];
  /**
   * `OPENBOT_APP_OAUTH_METADATA_DOCUMENTS` (default true): register at App authorization servers by
   * Client ID Metadata Document when they advertise it and the public URL is https (decision 043).
   * false: a server that cannot reach the public URL (an intranet deployment) gets dynamic registration instead.
   */
  readonly appOAuthMetadataDocuments: boolean;
  /**
   * The origin browsers and identity providers reach this server at (`OPENBOT_PUBLIC_URL`, no
   * trailing slash); SSO redirect URIs are built from it. Development default: `http://<host>:<port>`;
   * null in production when unset (single sign-on then refuses to start a login).
   */
  readonly publicUrl: string | null;
  /** Whether session cookies carry `Secure`: always, except when the public URL is plain http on loopback. */
  readonly cookieSecure: boolean;
  /** Caps on long-lived and public work (docs/decisions/017). */
  readonly limits: Limits;
  /** What one organization may hold or run at once (docs/decisions/076), shown at `GET /v1/limits`. */
  readonly organizationLimits: OrganizationLimits;
  /**
   * Proxies whose `X-Forwarded-For` names the client address (addresses, CIDRs or `loopback`);
   * empty: the socket's address is the client's (a forwarded header is ignored).
   */
  readonly trustedProxies: readonly string[];
  /**
   * `OPENBOT_METRICS_PORT` / `OPENBOT_METRICS_HOST`: where `/metrics` listens, on its own port,
   * never the API's (docs/decisions/034-metrics.md); null port: no metrics server and no recording.
   */
  readonly metrics: { readonly port: number; readonly host: string; readonly modelLabels: number } | null;
  /**
   * Traces (docs/decisions/040-traces.md): the OTLP/HTTP URL spans are sent to, from
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (plus
   * `/v1/traces`), and the service name (`OTEL_SERVICE_NAME`, default `openbot`). Null: no tracer.
   */
  readonly traces: { readonly url: string; readonly serviceName: string } | null;
  /**
   * Retention (docs/decisions/041-retention.md): the platform defaults of how many days after an
   * execution ended its `text.delta` events (`OPENBOT_RETENTION_TEXT_DELTA_DAYS`, default 30) and its
   * calls' saved results (`OPENBOT_RETENTION_CALL_PAYLOAD_DAYS`, default 30) are kept (an organization's
   * own settings win), and when the retention workflow runs (`OPENBOT_RETENTION_SCHEDULE`, cron, default every 15 minutes).
   */
  readonly retention: RetentionDefaults;
  /**
   * Paced reads of model streams on a busy node (docs/decisions/063): from `pacedFromStreams` open
   * streams on (`OPENBOT_MODEL_READ_PACE_FROM_STREAMS`, default 8), a stream past its first event is
   * read every `readPaceMs` (`OPENBOT_MODEL_READ_PACE_MS`, default 25); 0: every chunk as it comes.
   */
  readonly modelReads: { readonly readPaceMs: number; readonly pacedFromStreams: number };
  /**
   * `OPENBOT_DEFAULT_PRICE` (decision 072): what a model call of an organization with platform
   * credits costs when the platform set no price for its model, in micros per million tokens.
   * Null (unset): such a call is refused before it sends (`ModelNotPriced`).
   */
  readonly defaultPrice: DefaultPrice | null;
}

/** The operator's default price, in micros per million input, output and cached input tokens. */
export interface DefaultPrice {
  readonly inputPerMillionMicros: number;
  readonly outputPerMillionMicros: number;
  readonly cachedInputPerMillionMicros: number;
}

/** Caps on long-lived and public work (docs/decisions/017-request-limits.md). */
export interface Limits {
  /** Open event streams (SSE, waiting long polls) of one API key or session, across all nodes. */
  readonly streamsPerCredential: number;
  /** Open event streams on this node. */
  readonly streamsPerNode: number;
  /** An event stream ends cleanly after this long; the client resumes with Last-Event-ID. */
  readonly streamMaxSeconds: number;
  /** SSO logins started from one client address per window, across all nodes. */
  readonly ssoLoginsPerWindow: number;
  /** Failed authentications from one client address per window, across all nodes; then 429. */
  readonly authFailuresPerWindow: number;
  /** The rate-limit window in seconds; a client's window starts at its first counted request. */
  readonly windowSeconds: number;
  /** The most output tokens one model call may ask for (`max_tokens`, with the Bot's remaining output limit): what a reservation bounds. */
  readonly modelCallMaxTokens: number;
  /** The fewest output tokens a call lowered to fit a budget, the credits or a cost cap still asks for; below it the call is refused (decision 081). */
  readonly modelCallMinTokens: number;
  /** Shared permits for memory helper calls (learning), across all nodes (LIM-01). */
  readonly memoryHelperPermits: number;
  /** The token budget of the memories a Turn's context may hold. */
  readonly memoryContextTokens: number;
}

/**
 * Per-organization limits (docs/decisions/076-organization-limits.md), the same for every
 * organization; each has a default that ordinary use never reaches.
 */
export interface OrganizationLimits {
  /** `OPENBOT_ORG_API_KEYS`: live (unrevoked, unexpired) API keys; the next key is 409 LimitReached. */
  readonly apiKeys: number;
  /** `OPENBOT_ORG_STREAMS`: open event streams of all the organization's credentials together; then 429. */
  readonly streams: number;
  /** `OPENBOT_ORG_QUEUED_TURNS_PER_CHAT`: Turns waiting behind a Chat's advancing one; then 429. */
  readonly queuedTurnsPerChat: number;
  /** `OPENBOT_ORG_TOOL_CALLS_PER_STEP`: tool calls answered per model step; the rest get an error result. */
  readonly toolCallsPerStep: number;
  /** `OPENBOT_ORG_RUNNING_TURNS`: Turns advancing at once across the organization's Chats; a new one is 429. */
  readonly runningTurns: number;
  /** `OPENBOT_ORG_FILE_BYTES`: bytes of the organization's stored files (uploads count from their start); then 409. */
  readonly fileBytes: number;
  /** `OPENBOT_ORG_MEMORY_ITEMS`: memory items of all the organization's Bots; then 409. */
  readonly memoryItems: number;
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];

/** Parses the environment; throws ConfigError for the first invalid variable. */
export function parseConfig(env: Env, cwd = process.cwd()): Config {
  const production = env.NODE_ENV === 'production';
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl !== null) parseDatabaseUrl(databaseUrl);
  if (production && databaseUrl === null) {
    throw new ConfigError('DATABASE_URL', 'is required in production (the embedded PostgreSQL is for development only)');
  }
  const masterKey = optional(env, 'OPENBOT_MASTER_KEY');
  if (production && masterKey === null) {
    throw new ConfigError('OPENBOT_MASTER_KEY', 'is required in production (generated keys are for development only)');
  }
  const adminToken = optional(env, 'OPENBOT_ADMIN_TOKEN');
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError('OPENBOT_ADMIN_TOKEN', 'must be at least 16 characters long');
  }
  const store = optional(env, 'OBJECT_STORE') ?? 'fs';
  if (store !== 'fs' && store !== 's3') throw new ConfigError('OBJECT_STORE', `must be "fs" or "s3", not "${store}"`);
  const allowFs = optional(env, 'OBJECT_STORE_ALLOW_FS') ?? 'false';
  if (allowFs !== 'true' && allowFs !== 'false') throw new ConfigError('OBJECT_STORE_ALLOW_FS', 'must be "true" or "false"');
  if (production && store === 'fs' && allowFs !== 'true') {
    throw new ConfigError('OBJECT_STORE', 'must be "s3" in production (the fs store is for development only; OBJECT_STORE_ALLOW_FS=true overrides)');
  }
  const logLevel = optional(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const logFormat = optional(env, 'LOG_FORMAT') ?? 'auto';
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) {
    throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}`);
  }
  return {
    production,
    host: optional(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    dataDir: resolve(cwd, optional(env, 'OPENBOT_DATA_DIR') ?? '.openbot'),
    adminToken,
    masterKey: masterKey === null ? null : parseMasterKey('OPENBOT_MASTER_KEY', masterKey),
    oldMasterKeys: list(env, 'OPENBOT_MASTER_KEYS_OLD').map((k) => parseMasterKey('OPENBOT_MASTER_KEYS_OLD', k)),
    ...egressOf(env, production),
    objectStore: store === 'fs' ? { kind: 'fs' } : { kind: 's3', ...parseS3(env) },
    files: {
      maxBytes: integer(env, 'OPENBOT_FILE_MAX_BYTES', 52_428_800, 1, 1024 * 1024 * 1024 * 1024),
      uploadTimeoutSeconds: integer(env, 'OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS', 3_600, 1, 86_400),
    },
    nodeId: optional(env, 'OPENBOT_NODE_ID') ?? `${hostname()}-${process.pid}`,
    logLevel: logLevel as Config['logLevel'],
    logFormat: logFormat as LogFormatSetting,
    bodyLimit: integer(env, 'OPENBOT_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    bodyTimeoutSeconds: integer(env, 'OPENBOT_BODY_TIMEOUT_SECONDS', 30, 1, 3_600),
    shutdownTimeoutMs: integer(env, 'OPENBOT_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    leaseSeconds: integer(env, 'OPENBOT_LEASE_SECONDS', 15, 1, 3_600),
    databasePoolSize: integer(env, 'OPENBOT_DATABASE_POOL_SIZE', 10, 2, 1_000),
    maxDelegationDepth: integer(env, 'OPENBOT_MAX_DELEGATION_DEPTH', 5, 1, 20),
    appCallTimeoutSeconds: integer(env, 'OPENBOT_APP_CALL_TIMEOUT', 120, 1, 3600),
    appSessionIdleSeconds: integer(env, 'OPENBOT_APP_SESSION_IDLE_SECONDS', 60, 1, 3600),
    appOAuthClients: appOAuthClientsOf(env),
    appOAuthMetadataDocuments: trueOrFalse(env, 'OPENBOT_APP_OAUTH_METADATA_DOCUMENTS', true),
    ...publicUrlOf(env, production),
    ...limitsOf(env),
    organizationLimits: organizationLimitsOf(env),
    metrics: metricsOf(env),
    traces: tracesOf(env),
    retention: retentionOf(env),
    modelReads: {
      readPaceMs: integer(env, 'OPENBOT_MODEL_READ_PACE_MS', READ_PACE_MS, 0, 1_000),
      pacedFromStreams: integer(env, 'OPENBOT_MODEL_READ_PACE_FROM_STREAMS', PACED_FROM_STREAMS, 1, 1_000_000),
    },
    defaultPrice: defaultPriceOf(env),
  };
}

/** `<input>,<output>[,<cached input>]`, whole micros per million tokens; the cached price defaults to the input price. */
function defaultPriceOf(env: Env): DefaultPrice | null {
  const value = optional(env, 'OPENBOT_DEFAULT_PRICE');
  if (value === null) return null;
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length < 2 || parts.length > 3 || parts.some((part) => !/^\d{1,15}$/.test(part) || !Number.isSafeInteger(Number(part)))) {
    throw new ConfigError('OPENBOT_DEFAULT_PRICE', 'must be `<input>,<output>[,<cached input>]`: whole micros per million tokens, each at least 0 (e.g. 150000,600000)');
  }
  const [input, output, cached] = parts.map(Number) as [number, number, number | undefined];
  return { inputPerMillionMicros: input, outputPerMillionMicros: output, cachedInputPerMillionMicros: cached ?? input };
}

function trueOrFalse(env: Env, name: string, fallback: boolean): boolean {
  const value = optional(env, name);
  if (value === null) return fallback;
  if (value !== 'true' && value !== 'false') throw new ConfigError(name, 'must be "true" or "false"');
  return value === 'true';
}

function appOAuthClientsOf(env: Env): PreRegisteredOAuthClient[] {
  const parsed = parsePreRegisteredClients(env.OPENBOT_APP_OAUTH_CLIENTS);
  if ('invalid' in parsed) throw new ConfigError('OPENBOT_APP_OAUTH_CLIENTS', parsed.invalid);
  return parsed.clients;
}

/** Off unless an OTLP endpoint is set (decision 040): the standard OpenTelemetry variables. */
function tracesOf(env: Env): Config['traces'] {
  const signal = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (signal === null && base === null) return null;
  const name = signal !== null ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const url = signal ?? `${base!.replace(/\/+$/, '')}/v1/traces`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(name, 'must be an http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(name, 'must be an http(s) URL');
  return { url, serviceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'openbot' };
}

/** Retention defaults and the ceiling above them (decisions 041, 074). */
function retentionOf(env: Env): RetentionDefaults {
  const maxDays = integer(env, 'OPENBOT_RETENTION_MAX_DAYS', MAX_RETENTION_DAYS, 1, MAX_RETENTION_DAYS);
  const days = (name: string): number => {
    const value = integer(env, name, Math.min(30, maxDays), 1, MAX_RETENTION_DAYS);
    if (value > maxDays) throw new ConfigError(name, `must not exceed OPENBOT_RETENTION_MAX_DAYS (${maxDays})`);
    return value;
  };
  return {
    textDeltaDays: days('OPENBOT_RETENTION_TEXT_DELTA_DAYS'),
    callPayloadDays: days('OPENBOT_RETENTION_CALL_PAYLOAD_DAYS'),
    schedule: optional(env, 'OPENBOT_RETENTION_SCHEDULE') ?? '*/15 * * * *',
    maxDays,
  };
}

/** The metrics port is its own (decision 034): the public API port never answers `/metrics`. */
function metricsOf(env: Env): Config['metrics'] {
  if (optional(env, 'OPENBOT_METRICS_PORT') === null) return null;
  const port = integer(env, 'OPENBOT_METRICS_PORT', 0, 0, 65535);
  // Port 0 picks a free port (tests); any other port must differ from the API's.
  if (port !== 0 && port === integer(env, 'PORT', 8080, 0, 65535)) {
    throw new ConfigError('OPENBOT_METRICS_PORT', 'must differ from PORT (metrics are never served on the API port)');
  }
  // Not HOST (0.0.0.0 in the image): the unauthenticated metrics port listens beyond the host only when asked (decision 074).
  return { port, host: optional(env, 'OPENBOT_METRICS_HOST') ?? '127.0.0.1', modelLabels: integer(env, 'OPENBOT_METRICS_MODEL_LABELS', 100, 1, 10_000) };
}

// Limits (docs/decisions/017): every cap has a default that never bothers ordinary use.
function limitsOf(env: Env): Pick<Config, 'limits' | 'trustedProxies'> {
  return {
    limits: {
      streamsPerCredential: integer(env, 'OPENBOT_STREAMS_PER_KEY', 500, 1, 1_000_000),
      streamsPerNode: integer(env, 'OPENBOT_STREAMS_PER_NODE', 2_000, 1, 1_000_000),
      streamMaxSeconds: integer(env, 'OPENBOT_STREAM_MAX_SECONDS', 900, 1, 86_400),
      ssoLoginsPerWindow: integer(env, 'OPENBOT_SSO_LOGIN_LIMIT', 60, 1, 1_000_000),
      authFailuresPerWindow: integer(env, 'OPENBOT_AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
      windowSeconds: integer(env, 'OPENBOT_RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
      modelCallMaxTokens: integer(env, 'OPENBOT_MODEL_CALL_MAX_TOKENS', 4_096, 1, 1_000_000),
      modelCallMinTokens: integer(env, 'OPENBOT_MODEL_CALL_MIN_TOKENS', 256, 1, 1_000_000),
      memoryHelperPermits: integer(env, 'OPENBOT_MEMORY_HELPER_PERMITS', 4, 1, 10_000),
      memoryContextTokens: integer(env, 'OPENBOT_MEMORY_CONTEXT_TOKENS', 2_000, 1, 1_000_000),
    },
    trustedProxies: list(env, 'OPENBOT_TRUSTED_PROXIES').map((entry) => parseTrustedProxy(entry)),
  };
}

// Per organization (docs/decisions/076): generous defaults; an operator lowers them for shared servers.
function organizationLimitsOf(env: Env): OrganizationLimits {
  return {
    apiKeys: integer(env, 'OPENBOT_ORG_API_KEYS', 100, 1, 1_000_000),
    streams: integer(env, 'OPENBOT_ORG_STREAMS', 1_000, 1, 1_000_000),
    queuedTurnsPerChat: integer(env, 'OPENBOT_ORG_QUEUED_TURNS_PER_CHAT', 20, 1, 1_000_000),
    toolCallsPerStep: integer(env, 'OPENBOT_ORG_TOOL_CALLS_PER_STEP', 32, 1, 10_000),
    runningTurns: integer(env, 'OPENBOT_ORG_RUNNING_TURNS', 200, 1, 1_000_000),
    fileBytes: integer(env, 'OPENBOT_ORG_FILE_BYTES', 10 * 1024 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
    memoryItems: integer(env, 'OPENBOT_ORG_MEMORY_ITEMS', 100_000, 1, 100_000_000),
  };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function parseTrustedProxy(entry: string): string {
  if (PROXY_NAMES.has(entry)) return entry;
  const [address, bits, ...rest] = entry.split('/');
  const version = isIP(address ?? '');
  const max = version === 4 ? 32 : 128;
  if (version === 0 || rest.length > 0 || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max))) {
    throw new ConfigError('OPENBOT_TRUSTED_PROXIES', `"${entry}" is not an IP address, a CIDR, or loopback/linklocal/uniquelocal`);
  }
  return entry;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * `OPENBOT_PUBLIC_URL` is an origin (http or https, no path, query or credentials). A browser
 * drops `Secure` cookies over plain http, so only a loopback http origin (local development and
 * tests) gets cookies without `Secure`; any other http origin keeps `Secure` and must sit behind TLS.
 */
function publicUrlOf(env: Env, production: boolean): Pick<Config, 'publicUrl' | 'cookieSecure'> {
  const value = optional(env, 'OPENBOT_PUBLIC_URL');
  if (value === null) {
    if (production) return { publicUrl: null, cookieSecure: true };
    const host = optional(env, 'HOST') ?? '127.0.0.1';
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : isIP(host) === 6 ? `[${host}]` : host;
    let derived: URL;
    try {
      derived = new URL(`http://${shown}:${integer(env, 'PORT', 8080, 0, 65535)}`);
    } catch {
      // A HOST no URL can name (the listener will say so itself): no derived public URL.
      return { publicUrl: null, cookieSecure: true };
    }
    return { publicUrl: derived.origin, cookieSecure: !LOOPBACK_HOSTS.has(derived.hostname) };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('OPENBOT_PUBLIC_URL', 'is not a URL (expected e.g. https://openbot.example.com)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('OPENBOT_PUBLIC_URL', 'must start with http:// or https://');
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new ConfigError('OPENBOT_PUBLIC_URL', 'must be an origin only (scheme, host and port), without path, query or credentials');
  }
  return { publicUrl: url.origin, cookieSecure: url.protocol === 'https:' || !LOOPBACK_HOSTS.has(url.hostname) };
}

/** `<keyId>:<base64 of 32 bytes>`, or bare base64 meaning key ID `k1` (docs/operating.md "Configuration"). */
export function parseMasterKey(variable: string, value: string): MasterKey {
  const colon = value.indexOf(':');
  const id = colon === -1 ? 'k1' : value.slice(0, colon);
  const encoded = colon === -1 ? value : value.slice(colon + 1);
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) {
    throw new ConfigError(variable, 'key ID must be 1-64 characters of letters, digits, ".", "_" or "-"');
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new ConfigError(variable, 'key must be base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== 32) throw new ConfigError(variable, `key must decode to 32 bytes, not ${key.length}`);
  return { id, key };
}

function parseDatabaseUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('DATABASE_URL', 'is not a URL (expected postgres://user:password@host:port/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
}

/** The loopback ranges a development node may call while `OPENBOT_EGRESS_ALLOW` is unset (a local model server). */
const DEVELOPMENT_EGRESS_ALLOW: readonly string[] = ['127.0.0.0/8', '::1'];

/**
 * Egress settings. Outside production an unset `OPENBOT_EGRESS_ALLOW` allows loopback (Ollama,
 * LM Studio, vLLM on the developer's machine); setting it, even to an empty value, replaces that
 * default, so tests that set it see exactly their own list.
 */
function egressOf(
  env: Env,
  production: boolean,
): Pick<Config, 'egressAllow' | 'egressLoopbackByDefault' | 'egressToolAnswerLimit' | 'egressDocumentLimit' | 'egressCaFile'> {
  const byDefault = !production && env.OPENBOT_EGRESS_ALLOW === undefined;
  return {
    egressAllow: byDefault ? DEVELOPMENT_EGRESS_ALLOW : list(env, 'OPENBOT_EGRESS_ALLOW').map((entry) => parseEgressEntry(entry)),
    egressLoopbackByDefault: byDefault,
    egressToolAnswerLimit: integer(env, 'OPENBOT_TOOL_ANSWER_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    egressDocumentLimit: integer(env, 'OPENBOT_EGRESS_DOCUMENT_LIMIT', 64 * 1024, 1024, 16 * 1024 * 1024),
    egressCaFile: env.OPENBOT_EGRESS_CA_FILE === undefined || env.OPENBOT_EGRESS_CA_FILE.trim() === '' ? null : env.OPENBOT_EGRESS_CA_FILE.trim(),
  };
}

function parseEgressEntry(entry: string): string {
  const [address, bits, ...rest] = entry.split('/');
  if (bits !== undefined) {
    const version = isIP(address ?? '');
    const max = version === 4 ? 32 : 128;
    if (version === 0 || rest.length > 0 || !/^\d+$/.test(bits) || Number(bits) > max) {
      throw new ConfigError('OPENBOT_EGRESS_ALLOW', `"${entry}" is not a host or CIDR`);
    }
  } else if (!/^[A-Za-z0-9.:-]+$/.test(entry)) {
    throw new ConfigError('OPENBOT_EGRESS_ALLOW', `"${entry}" is not a host or CIDR`);
  }
  return entry;
}

function parseS3(env: Env): S3Config {
  const bucket = optional(env, 'S3_BUCKET');
  if (bucket === null) throw new ConfigError('S3_BUCKET', 'is required when OBJECT_STORE=s3');
  const forcePathStyle = optional(env, 'S3_FORCE_PATH_STYLE') ?? 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') {
    throw new ConfigError('S3_FORCE_PATH_STYLE', 'must be "true" or "false"');
  }
  const endpoint = optional(env, 'S3_ENDPOINT');
  if (endpoint !== null) {
    let url: URL | null;
    try {
      url = new URL(endpoint);
    } catch {
      url = null;
    }
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError('S3_ENDPOINT', 'must be an http:// or https:// URL (e.g. https://s3.eu-central-1.amazonaws.com)');
    }
  }
  const accessKeyId = optional(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new ConfigError(accessKeyId === null ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  const region = optional(env, 'S3_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError('S3_REGION', 'must be a region name such as eu-central-1');
  return {
    endpoint,
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: forcePathStyle === 'true',
  };
}

function optional(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? null : value;
}

function list(env: Env, name: string): string[] {
  const value = optional(env, name);
  return value === null ? [] : value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = optional(env, name);
  if (value === null) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}`);
  }
  return Number(value);
}
