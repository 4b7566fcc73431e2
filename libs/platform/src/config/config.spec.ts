import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError, parseConfig, parseMasterKey } from './config';

const KEY = randomBytes(32).toString('base64');
const KEY2 = randomBytes(32).toString('base64');
const PG = 'postgres://u:p@db.example:5432/openbot';

/** The production settings that pass; each test removes or breaks one of them. */
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: PG,
  OPENBOT_MASTER_KEY: `k9:${KEY}`,
  OBJECT_STORE: 's3',
  S3_BUCKET: 'openbot',
};

/** Runs parseConfig and returns its ConfigError, failing when it does not throw one. */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env, '/srv/app');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}

function expectRejected(env: Record<string, string | undefined>, variable: string): ConfigError {
  const error = configError(env);
  expect(error.variable).toBe(variable);
  expect(error.message.startsWith(`${variable}: `)).toBe(true);
  return error;
}

describe('parseConfig defaults', () => {
  it('an empty environment is a valid development configuration', () => {
    const config = parseConfig({}, '/srv/app');
    expect(config).toEqual({
      production: false,
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: null,
      dataDir: '/srv/app/.openbot',
      adminToken: null,
      masterKey: null,
      oldMasterKeys: [],
      egressAllow: ['127.0.0.0/8', '::1'],
      egressLoopbackByDefault: true,
      egressToolAnswerLimit: 1024 * 1024,
      egressDocumentLimit: 64 * 1024,
      egressCaFile: null,
      objectStore: { kind: 'fs' },
      files: { maxBytes: 52_428_800, uploadTimeoutSeconds: 3_600 },
      nodeId: `${hostname()}-${process.pid}`,
      logLevel: 'info',
      logFormat: 'auto',
      bodyLimit: 1024 * 1024,
      bodyTimeoutSeconds: 30,
      shutdownTimeoutMs: 10_000,
      leaseSeconds: 15,
      databasePoolSize: 10,
      maxDelegationDepth: 5,
      appCallTimeoutSeconds: 120,
      appSessionIdleSeconds: 60,
      appOAuthClients: [],
      appOAuthMetadataDocuments: true,
      publicUrl: 'http://127.0.0.1:8080',
      cookieSecure: false,
      limits: { streamsPerCredential: 500, streamsPerNode: 2_000, streamMaxSeconds: 900, ssoLoginsPerWindow: 60, authFailuresPerWindow: 30, windowSeconds: 60, modelCallMaxTokens: 4_096, modelCallMinTokens: 256, memoryHelperPermits: 4, memoryContextTokens: 2_000 },
      organizationLimits: { apiKeys: 100, streams: 1_000, queuedTurnsPerChat: 20, toolCallsPerStep: 32, runningTurns: 200, fileBytes: 10 * 1024 * 1024 * 1024, memoryItems: 100_000 },
      trustedProxies: [],
      metrics: null,
      traces: null,
      retention: { textDeltaDays: 30, callPayloadDays: 30, schedule: '*/15 * * * *', maxDays: 3650 },
      modelReads: { readPaceMs: 25, pacedFromStreams: 8 },
      defaultPrice: null,
    });
  });

  it('blank values count as unset', () => {
    const config = parseConfig({ PORT: '', DATABASE_URL: '   ', LOG_LEVEL: '', OBJECT_STORE: ' ', OPENBOT_MASTER_KEY: '' }, '/srv/app');
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBeNull();
    expect(config.logLevel).toBe('info');
    expect(config.objectStore).toEqual({ kind: 'fs' });
    expect(config.masterKey).toBeNull();
  });

  it('NODE_ENV other than "production" is development', () => {
    expect(parseConfig({ NODE_ENV: 'test' }).production).toBe(false);
    expect(parseConfig({ NODE_ENV: 'Production' }).production).toBe(false);
  });

  it('reads every given value', () => {
    const config = parseConfig(
      {
        HOST: '0.0.0.0',
        PORT: '0',
        DATABASE_URL: 'postgresql://localhost/x',
        OPENBOT_DATA_DIR: 'data',
        OPENBOT_ADMIN_TOKEN: 'a-long-admin-token',
        OPENBOT_MASTER_KEY: KEY,
        OPENBOT_MASTER_KEYS_OLD: ` old1:${KEY2} , old2:${KEY} ,`,
        OPENBOT_EGRESS_ALLOW: '127.0.0.1, 10.0.0.0/8,::1/128,models.internal',
        OPENBOT_NODE_ID: 'node-a',
        LOG_LEVEL: 'debug',
        OPENBOT_BODY_LIMIT: '2048',
        OPENBOT_SHUTDOWN_TIMEOUT_MS: '0',
      },
      '/srv/app',
    );
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 0,
      databaseUrl: 'postgresql://localhost/x',
      dataDir: '/srv/app/data',
      adminToken: 'a-long-admin-token',
      egressAllow: ['127.0.0.1', '10.0.0.0/8', '::1/128', 'models.internal'],
      nodeId: 'node-a',
      logLevel: 'debug',
      bodyLimit: 2048,
      shutdownTimeoutMs: 0,
    });
    expect(config.masterKey).toEqual({ id: 'k1', key: Buffer.from(KEY, 'base64') });
    expect(config.oldMasterKeys).toEqual([
      { id: 'old1', key: Buffer.from(KEY2, 'base64') },
      { id: 'old2', key: Buffer.from(KEY, 'base64') },
    ]);
  });

  it('an absolute OPENBOT_DATA_DIR is kept as given', () => {
    expect(parseConfig({ OPENBOT_DATA_DIR: '/var/lib/openbot' }, '/srv/app').dataDir).toBe('/var/lib/openbot');
  });

  it('s3 reads its settings with defaults for region and path style', () => {
    expect(parseConfig({ OBJECT_STORE: 's3', S3_BUCKET: 'b' }).objectStore).toEqual({
      kind: 's3',
      endpoint: null,
      bucket: 'b',
      region: 'us-east-1',
      accessKeyId: null,
      secretAccessKey: null,
      forcePathStyle: false,
    });
    expect(
      parseConfig({
        OBJECT_STORE: 's3',
        S3_BUCKET: 'b',
        S3_ENDPOINT: 'http://127.0.0.1:4568',
        S3_REGION: 'eu-west-1',
        S3_ACCESS_KEY_ID: 'id',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_FORCE_PATH_STYLE: 'true',
      }).objectStore,
    ).toEqual({
      kind: 's3',
      endpoint: 'http://127.0.0.1:4568',
      bucket: 'b',
      region: 'eu-west-1',
      accessKeyId: 'id',
      secretAccessKey: 'secret',
      forcePathStyle: true,
    });
  });

  it('a complete production configuration passes', () => {
    const config = parseConfig(PRODUCTION);
    expect(config.production).toBe(true);
    expect(config.masterKey?.id).toBe('k9');
    expect(config.objectStore.kind).toBe('s3');
    expect(config.adminToken).toBeNull();
  });
});

describe('parseConfig refuses invalid values with a ConfigError naming the variable first', () => {
  it.each(['abc', '-1', '65536', '80.5', '1e3', '0x50', '8080 x'])('PORT=%p', (value) => {
    const error = expectRejected({ PORT: value }, 'PORT');
    expect(error.message).toContain('65535');
  });

  it('PORT accepts the bounds 0 and 65535', () => {
    expect(parseConfig({ PORT: '0' }).port).toBe(0);
    expect(parseConfig({ PORT: '65535' }).port).toBe(65535);
  });

  it.each(['verbose', 'INFO', 'warning'])('LOG_LEVEL=%p', (value) => {
    expectRejected({ LOG_LEVEL: value }, 'LOG_LEVEL');
  });

  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('LOG_LEVEL=%p is accepted', (value) => {
    expect(parseConfig({ LOG_LEVEL: value }).logLevel).toBe(value);
  });

  it.each(['text', 'JSON', 'yes'])('LOG_FORMAT=%p', (value) => {
    expect(expectRejected({ LOG_FORMAT: value }, 'LOG_FORMAT').message).toBe('LOG_FORMAT: must be one of auto, json, pretty');
  });

  it.each(['auto', 'json', 'pretty'])('LOG_FORMAT=%p is accepted', (value) => {
    expect(parseConfig({ LOG_FORMAT: value }).logFormat).toBe(value);
  });

  it.each(['gcs', 'S3', 'file'])('OBJECT_STORE=%p', (value) => {
    expectRejected({ OBJECT_STORE: value }, 'OBJECT_STORE');
  });

  it('S3_BUCKET missing with OBJECT_STORE=s3', () => {
    expectRejected({ OBJECT_STORE: 's3' }, 'S3_BUCKET');
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: ' ' }, 'S3_BUCKET');
  });

  it('[PLAT-03] S3_ENDPOINT that is no http(s) URL, a lone S3 credential half, a malformed S3_REGION', () => {
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'minio:9000' }, 'S3_ENDPOINT');
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'ftp://minio' }, 'S3_ENDPOINT');
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' }, 'S3_SECRET_ACCESS_KEY');
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_SECRET_ACCESS_KEY: 's' }, 'S3_ACCESS_KEY_ID');
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_REGION: 'EU West' }, 'S3_REGION');
  });

  it('OPENBOT_FILE_MAX_BYTES, OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS and OBJECT_STORE_ALLOW_FS out of range', () => {
    expectRejected({ OPENBOT_FILE_MAX_BYTES: '0' }, 'OPENBOT_FILE_MAX_BYTES');
    expectRejected({ OPENBOT_FILE_MAX_BYTES: '10MB' }, 'OPENBOT_FILE_MAX_BYTES');
    expectRejected({ OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS: '0' }, 'OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS');
    expectRejected({ OBJECT_STORE_ALLOW_FS: 'yes' }, 'OBJECT_STORE_ALLOW_FS');
    expect(parseConfig({ OPENBOT_FILE_MAX_BYTES: '1024', OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS: '5' }).files).toEqual({ maxBytes: 1024, uploadTimeoutSeconds: 5 });
  });

  it('S3_FORCE_PATH_STYLE other than true/false', () => {
    expectRejected({ OBJECT_STORE: 's3', S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE');
  });

  it.each(['not a url', 'localhost:5432/db', 'mysql://u:p@h/db', 'http://h/db', 'postgres'])('DATABASE_URL=%p', (value) => {
    expectRejected({ DATABASE_URL: value }, 'DATABASE_URL');
  });

  it('DATABASE_URL accepts postgres:// and postgresql://', () => {
    expect(parseConfig({ DATABASE_URL: PG }).databaseUrl).toBe(PG);
    expect(parseConfig({ DATABASE_URL: 'postgresql://h/db' }).databaseUrl).toBe('postgresql://h/db');
  });

  it('OPENBOT_MASTER_KEY that is not base64', () => {
    expect(expectRejected({ OPENBOT_MASTER_KEY: 'k1:not*base64!' }, 'OPENBOT_MASTER_KEY').message).toContain('base64');
    expectRejected({ OPENBOT_MASTER_KEY: '%%%%' }, 'OPENBOT_MASTER_KEY');
    expectRejected({ OPENBOT_MASTER_KEY: 'k1:' }, 'OPENBOT_MASTER_KEY');
  });

  it('OPENBOT_MASTER_KEY of the wrong length', () => {
    const short = randomBytes(16).toString('base64');
    const long = randomBytes(33).toString('base64');
    expect(expectRejected({ OPENBOT_MASTER_KEY: short }, 'OPENBOT_MASTER_KEY').message).toContain('32 bytes');
    expectRejected({ OPENBOT_MASTER_KEY: `k2:${long}` }, 'OPENBOT_MASTER_KEY');
  });

  it.each([':', 'bad id', 'k/1', 'ключ', 'x'.repeat(65)])('OPENBOT_MASTER_KEY with key id %p', (id) => {
    expect(expectRejected({ OPENBOT_MASTER_KEY: `${id}:${KEY}` }, 'OPENBOT_MASTER_KEY').message).toContain('key ID');
  });

  it('OPENBOT_MASTER_KEY accepts "<id>:<base64>" and bare base64 as key k1', () => {
    expect(parseConfig({ OPENBOT_MASTER_KEY: `prod-2025.a_1:${KEY}` }).masterKey?.id).toBe('prod-2025.a_1');
    expect(parseConfig({ OPENBOT_MASTER_KEY: KEY }).masterKey).toEqual({ id: 'k1', key: Buffer.from(KEY, 'base64') });
  });

  it('OPENBOT_MASTER_KEYS_OLD: one bad entry in the list refuses the whole variable', () => {
    expectRejected({ OPENBOT_MASTER_KEYS_OLD: `old1:${KEY},old2:short` }, 'OPENBOT_MASTER_KEYS_OLD');
    expectRejected({ OPENBOT_MASTER_KEYS_OLD: `old1:${KEY};old2:${KEY2}` }, 'OPENBOT_MASTER_KEYS_OLD');
    expectRejected({ OPENBOT_MASTER_KEYS_OLD: `bad id:${KEY}` }, 'OPENBOT_MASTER_KEYS_OLD');
  });

  it('OPENBOT_MASTER_KEYS_OLD empty entries are skipped', () => {
    expect(parseConfig({ OPENBOT_MASTER_KEYS_OLD: ` , ,old1:${KEY},` }).oldMasterKeys.map((k) => k.id)).toEqual(['old1']);
  });

  it.each(['10.0.0.0/33', '::1/129', 'example.com/24', '10.0.0.0/', '10.0.0.0/x', '300.1.2.3/8', 'http://x', 'a b', '10.0.0.0/-1', '10.0.0.0/8/9', '10.0.0.0/08x'])(
    'OPENBOT_EGRESS_ALLOW entry %p',
    (entry) => {
      expect(expectRejected({ OPENBOT_EGRESS_ALLOW: `127.0.0.1,${entry}` }, 'OPENBOT_EGRESS_ALLOW').message).toContain(entry);
    },
  );

  it('OPENBOT_EGRESS_ALLOW accepts hosts, addresses and CIDRs at their bounds', () => {
    const allow = '127.0.0.1,0.0.0.0/0,10.0.0.0/32,::1,fd00::/8,::/128,model-host.local';
    expect(parseConfig({ OPENBOT_EGRESS_ALLOW: allow }).egressAllow).toEqual(allow.split(','));
  });

  describe('egress (decision 016)', () => {
    it('in development an unset OPENBOT_EGRESS_ALLOW allows loopback, for a local model server', () => {
      expect(parseConfig({})).toMatchObject({ egressAllow: ['127.0.0.0/8', '::1'], egressLoopbackByDefault: true });
    });

    it('setting OPENBOT_EGRESS_ALLOW, even to an empty value, replaces the loopback default', () => {
      expect(parseConfig({ OPENBOT_EGRESS_ALLOW: '' })).toMatchObject({ egressAllow: [], egressLoopbackByDefault: false });
      expect(parseConfig({ OPENBOT_EGRESS_ALLOW: '  ' })).toMatchObject({ egressAllow: [], egressLoopbackByDefault: false });
      expect(parseConfig({ OPENBOT_EGRESS_ALLOW: '10.0.0.7' })).toMatchObject({ egressAllow: ['10.0.0.7'], egressLoopbackByDefault: false });
    });

    it('production keeps refusing loopback when OPENBOT_EGRESS_ALLOW is unset', () => {
      expect(parseConfig(PRODUCTION)).toMatchObject({ egressAllow: [], egressLoopbackByDefault: false });
    });

    it('answer limits: 1 MiB for tool answers and 64 KiB for documents, configurable in bytes', () => {
      expect(parseConfig({ OPENBOT_TOOL_ANSWER_LIMIT: '2048', OPENBOT_EGRESS_DOCUMENT_LIMIT: '4096' })).toMatchObject({
        egressToolAnswerLimit: 2048,
        egressDocumentLimit: 4096,
      });
      for (const variable of ['OPENBOT_TOOL_ANSWER_LIMIT', 'OPENBOT_EGRESS_DOCUMENT_LIMIT']) {
        for (const value of ['12', 'lots', '-1', String(1024 ** 3)]) expectRejected({ [variable]: value }, variable);
      }
    });

    it('extra trusted CAs for HTTPS egress are off by default, and OPENBOT_EGRESS_CA_FILE names a PEM file', () => {
      expect(parseConfig({}).egressCaFile).toBeNull();
      expect(parseConfig({ OPENBOT_EGRESS_CA_FILE: ' ' }).egressCaFile).toBeNull();
      expect(parseConfig({ OPENBOT_EGRESS_CA_FILE: '/etc/openbot/ca.pem' }).egressCaFile).toBe('/etc/openbot/ca.pem');
    });
  });

  it('OPENBOT_DATABASE_POOL_SIZE sets the pool (default 10)', () => {
    expect(parseConfig({ OPENBOT_DATABASE_POOL_SIZE: '24' }).databasePoolSize).toBe(24);
  });

  it('OPENBOT_MODEL_READ_PACE_MS (0 turns pacing off, at most 1000) and OPENBOT_MODEL_READ_PACE_FROM_STREAMS (at least 1)', () => {
    expect(parseConfig({ OPENBOT_MODEL_READ_PACE_MS: '0', OPENBOT_MODEL_READ_PACE_FROM_STREAMS: '1' }).modelReads).toEqual({ readPaceMs: 0, pacedFromStreams: 1 });
    expect(parseConfig({ OPENBOT_MODEL_READ_PACE_MS: '1000' }).modelReads.readPaceMs).toBe(1_000);
    expectRejected({ OPENBOT_MODEL_READ_PACE_MS: '1001' }, 'OPENBOT_MODEL_READ_PACE_MS');
    expectRejected({ OPENBOT_MODEL_READ_PACE_MS: '-1' }, 'OPENBOT_MODEL_READ_PACE_MS');
    expectRejected({ OPENBOT_MODEL_READ_PACE_FROM_STREAMS: '0' }, 'OPENBOT_MODEL_READ_PACE_FROM_STREAMS');
  });

  it('OPENBOT_DEFAULT_PRICE: unset is none; `<input>,<output>[,<cached input>]` in whole micros, the cached price defaulting to the input price', () => {
    expect(parseConfig({}).defaultPrice).toBeNull();
    expect(parseConfig({ OPENBOT_DEFAULT_PRICE: '150000, 600000' }).defaultPrice).toEqual({ inputPerMillionMicros: 150_000, outputPerMillionMicros: 600_000, cachedInputPerMillionMicros: 150_000 });
    expect(parseConfig({ OPENBOT_DEFAULT_PRICE: '0,1,0' }).defaultPrice).toEqual({ inputPerMillionMicros: 0, outputPerMillionMicros: 1, cachedInputPerMillionMicros: 0 });
    for (const bad of ['150000', '1,2,3,4', '-1,2', '1.5,2', 'a,b', '1,', '9999999999999999,1']) expectRejected({ OPENBOT_DEFAULT_PRICE: bad }, 'OPENBOT_DEFAULT_PRICE');
  });

  it('OPENBOT_ADMIN_TOKEN shorter than 16 characters', () => {
    expectRejected({ OPENBOT_ADMIN_TOKEN: 'short' }, 'OPENBOT_ADMIN_TOKEN');
  });

  it.each([
    ['OPENBOT_BODY_LIMIT', '1023'],
    ['OPENBOT_BODY_LIMIT', 'big'],
    ['OPENBOT_SHUTDOWN_TIMEOUT_MS', '600001'],
    ['OPENBOT_LEASE_SECONDS', '0'],
    ['OPENBOT_LEASE_SECONDS', '3601'],
    ['OPENBOT_DATABASE_POOL_SIZE', '1'],
    ['OPENBOT_DATABASE_POOL_SIZE', '1001'],
    ['OPENBOT_DATABASE_POOL_SIZE', 'many'],
  ])('%s=%p', (variable, value) => {
    expectRejected({ [variable]: value }, variable);
  });
});

describe('App OAuth registration (decisions 038 and 043)', () => {
  it('OPENBOT_APP_OAUTH_METADATA_DOCUMENTS is true by default, takes "true" or "false", and refuses anything else', () => {
    expect(parseConfig({}).appOAuthMetadataDocuments).toBe(true);
    expect(parseConfig({ OPENBOT_APP_OAUTH_METADATA_DOCUMENTS: 'false' }).appOAuthMetadataDocuments).toBe(false);
    expect(parseConfig({ OPENBOT_APP_OAUTH_METADATA_DOCUMENTS: 'true' }).appOAuthMetadataDocuments).toBe(true);
    expectRejected({ OPENBOT_APP_OAUTH_METADATA_DOCUMENTS: 'no' }, 'OPENBOT_APP_OAUTH_METADATA_DOCUMENTS');
  });
});

describe('OPENBOT_PUBLIC_URL and session cookie security', () => {
  it('development derives the public URL from HOST and PORT; a wildcard host shows as loopback', () => {
    expect(parseConfig({ PORT: '9000' })).toMatchObject({ publicUrl: 'http://127.0.0.1:9000', cookieSecure: false });
    expect(parseConfig({ HOST: '0.0.0.0' })).toMatchObject({ publicUrl: 'http://127.0.0.1:8080', cookieSecure: false });
    expect(parseConfig({ HOST: '::1' })).toMatchObject({ publicUrl: 'http://[::1]:8080', cookieSecure: false });
    expect(parseConfig({ HOST: '10.1.2.3' })).toMatchObject({ publicUrl: 'http://10.1.2.3:8080', cookieSecure: true });
  });

  it('production leaves it unset (no login) and keeps cookies Secure', () => {
    expect(parseConfig(PRODUCTION)).toMatchObject({ publicUrl: null, cookieSecure: true });
  });

  it.each([
    ['https://openbot.example.com', 'https://openbot.example.com', true],
    ['https://openbot.example.com:8443/', 'https://openbot.example.com:8443', true],
    ['http://127.0.0.1:4000', 'http://127.0.0.1:4000', false],
    ['http://localhost:4000/', 'http://localhost:4000', false],
    ['http://[::1]:4000', 'http://[::1]:4000', false],
    ['http://openbot.internal', 'http://openbot.internal', true],
  ])('%p is the origin %p, cookies Secure: %p', (value, publicUrl, cookieSecure) => {
    expect(parseConfig({ ...PRODUCTION, OPENBOT_PUBLIC_URL: value })).toMatchObject({ publicUrl, cookieSecure });
  });

  it.each(['openbot.example.com', 'ftp://openbot.example.com', 'https://openbot.example.com/app', 'https://u:p@openbot.example.com', 'https://openbot.example.com/?a=1'])(
    'refuses %p',
    (value) => {
      expectRejected({ OPENBOT_PUBLIC_URL: value }, 'OPENBOT_PUBLIC_URL');
    },
  );
});

describe('parseConfig in production', () => {
  it('refuses a missing DATABASE_URL (no embedded PostgreSQL)', () => {
    const error = expectRejected({ ...PRODUCTION, DATABASE_URL: undefined }, 'DATABASE_URL');
    expect(error.message).toMatch(/required in production/);
  });

  it('refuses a missing OPENBOT_MASTER_KEY (no generated key)', () => {
    const error = expectRejected({ ...PRODUCTION, OPENBOT_MASTER_KEY: undefined }, 'OPENBOT_MASTER_KEY');
    expect(error.message).toMatch(/required in production/);
  });

  it('refuses the fs object store, given or by default', () => {
    expectRejected({ ...PRODUCTION, OBJECT_STORE: 'fs' }, 'OBJECT_STORE');
    expectRejected({ ...PRODUCTION, OBJECT_STORE: undefined, S3_BUCKET: undefined }, 'OBJECT_STORE');
    // The refusal can be overridden on purpose (one node with a persistent volume).
    expect(parseConfig({ ...PRODUCTION, OBJECT_STORE: 'fs', OBJECT_STORE_ALLOW_FS: 'true' }).objectStore).toEqual({ kind: 'fs' });
  });

  it('development accepts all three unset', () => {
    expect(() => parseConfig({ NODE_ENV: 'development' })).not.toThrow();
  });
});

describe('parseMasterKey', () => {
  it('names the variable it was given in its error', () => {
    expect(() => parseMasterKey('OPENBOT_MASTER_KEY (from /x/master-key)', 'nope!')).toThrow(
      /^OPENBOT_MASTER_KEY \(from \/x\/master-key\): /,
    );
  });

  it('splits at the first colon only', () => {
    expect(() => parseMasterKey('V', `a:b:${KEY}`)).toThrow(ConfigError);
  });
});

describe('limits and trusted proxies (docs/decisions/017)', () => {
  it('reads every cap and the trusted proxies', () => {
    const config = parseConfig({
      OPENBOT_STREAMS_PER_KEY: '3',
      OPENBOT_STREAMS_PER_NODE: '40',
      OPENBOT_STREAM_MAX_SECONDS: '5',
      OPENBOT_SSO_LOGIN_LIMIT: '7',
      OPENBOT_AUTH_FAILURE_LIMIT: '9',
      OPENBOT_RATE_LIMIT_WINDOW_SECONDS: '120',
      OPENBOT_TRUSTED_PROXIES: '10.0.0.0/8, loopback,2001:db8::1',
      OPENBOT_MEMORY_HELPER_PERMITS: '2',
      OPENBOT_MEMORY_CONTEXT_TOKENS: '500',
    });
    expect(config.limits).toEqual({ streamsPerCredential: 3, streamsPerNode: 40, streamMaxSeconds: 5, ssoLoginsPerWindow: 7, authFailuresPerWindow: 9, windowSeconds: 120, modelCallMaxTokens: 4_096, modelCallMinTokens: 256, memoryHelperPermits: 2, memoryContextTokens: 500 });
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', 'loopback', '2001:db8::1']);
  });

  it.each([
    ['OPENBOT_STREAMS_PER_KEY', '0'],
    ['OPENBOT_STREAMS_PER_NODE', 'many'],
    ['OPENBOT_STREAM_MAX_SECONDS', '0'],
    ['OPENBOT_SSO_LOGIN_LIMIT', '-1'],
    ['OPENBOT_AUTH_FAILURE_LIMIT', '1.5'],
    ['OPENBOT_RATE_LIMIT_WINDOW_SECONDS', '86401'],
    ['OPENBOT_TRUSTED_PROXIES', 'proxy.example.com'],
    ['OPENBOT_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['OPENBOT_MEMORY_HELPER_PERMITS', '0'],
    ['OPENBOT_MEMORY_CONTEXT_TOKENS', 'lots'],
    ['OPENBOT_BODY_TIMEOUT_SECONDS', '0'],
    ['OPENBOT_BODY_TIMEOUT_SECONDS', '3601'],
  ])('%s=%s stops the boot with a line naming it', (name, value) => {
    expect(() => parseConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});

describe('traces (docs/decisions/040-traces.md)', () => {
  it('are off unless an OTLP endpoint is set; the signal endpoint is used as it is, the base one gets /v1/traces', () => {
    expect(parseConfig({}).traces).toBeNull();
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).traces).toEqual({ url: 'http://collector:4318/v1/traces', serviceName: 'openbot' });
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces', OTEL_SERVICE_NAME: 'openbot-eu' }).traces).toEqual({ url: 'https://b/traces', serviceName: 'openbot-eu' });
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(expect.objectContaining({ variable: 'OTEL_EXPORTER_OTLP_ENDPOINT' }) as Error);
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(expect.objectContaining({ variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' }) as Error);
  });
});

describe('metrics port (docs/decisions/034-metrics.md)', () => {
  it('is off when OPENBOT_METRICS_PORT is unset, and listens on 127.0.0.1, not HOST, unless OPENBOT_METRICS_HOST says', () => {
    expect(parseConfig({}).metrics).toBeNull();
    expect(parseConfig({ OPENBOT_METRICS_PORT: '9464', HOST: '0.0.0.0' }).metrics).toEqual({ port: 9464, host: '127.0.0.1', modelLabels: 100 });
    expect(parseConfig({ OPENBOT_METRICS_PORT: '9464', OPENBOT_METRICS_HOST: '10.0.0.5', OPENBOT_METRICS_MODEL_LABELS: '7' }).metrics).toEqual({ port: 9464, host: '10.0.0.5', modelLabels: 7 });
  });

  it.each([
    [{ OPENBOT_METRICS_PORT: 'nine' }],
    [{ OPENBOT_METRICS_PORT: '70000' }],
    [{ OPENBOT_METRICS_PORT: '8080' }],
    [{ OPENBOT_METRICS_PORT: '9000', PORT: '9000' }],
  ])('refuses %j in one line naming the variable', (env) => {
    expect(() => parseConfig(env)).toThrow(expect.objectContaining({ variable: 'OPENBOT_METRICS_PORT' }) as Error);
  });
});

describe('retention ceiling (docs/decisions/074)', () => {
  it('OPENBOT_RETENTION_MAX_DAYS caps the defaults: unset defaults take the smaller of 30 and it', () => {
    expect(parseConfig({ OPENBOT_RETENTION_MAX_DAYS: '7' }).retention).toMatchObject({ textDeltaDays: 7, callPayloadDays: 7, maxDays: 7 });
    expect(parseConfig({ OPENBOT_RETENTION_MAX_DAYS: '90', OPENBOT_RETENTION_TEXT_DELTA_DAYS: '3' }).retention).toMatchObject({ textDeltaDays: 3, callPayloadDays: 30, maxDays: 90 });
  });

  it.each([
    [{ OPENBOT_RETENTION_MAX_DAYS: '7', OPENBOT_RETENTION_CALL_PAYLOAD_DAYS: '8' }, 'OPENBOT_RETENTION_CALL_PAYLOAD_DAYS'],
    [{ OPENBOT_RETENTION_MAX_DAYS: '0' }, 'OPENBOT_RETENTION_MAX_DAYS'],
    [{ OPENBOT_RETENTION_MAX_DAYS: '3651' }, 'OPENBOT_RETENTION_MAX_DAYS'],
  ])('refuses %j naming %s', (env, name) => {
    expect(() => parseConfig(env)).toThrow(new RegExp(`^${name}: `));
  });
});

describe('per-organization limits (docs/decisions/076)', () => {
  it('reads every limit', () => {
    const config = parseConfig({
      OPENBOT_ORG_API_KEYS: '5',
      OPENBOT_ORG_STREAMS: '50',
      OPENBOT_ORG_QUEUED_TURNS_PER_CHAT: '2',
      OPENBOT_ORG_TOOL_CALLS_PER_STEP: '8',
      OPENBOT_ORG_RUNNING_TURNS: '10',
      OPENBOT_ORG_FILE_BYTES: '1073741824',
      OPENBOT_ORG_MEMORY_ITEMS: '1000',
    });
    expect(config.organizationLimits).toEqual({ apiKeys: 5, streams: 50, queuedTurnsPerChat: 2, toolCallsPerStep: 8, runningTurns: 10, fileBytes: 1_073_741_824, memoryItems: 1000 });
  });

  it.each([
    ['OPENBOT_ORG_API_KEYS', '0'],
    ['OPENBOT_ORG_STREAMS', 'many'],
    ['OPENBOT_ORG_QUEUED_TURNS_PER_CHAT', '-1'],
    ['OPENBOT_ORG_TOOL_CALLS_PER_STEP', '10001'],
    ['OPENBOT_ORG_RUNNING_TURNS', '1.5'],
    ['OPENBOT_ORG_FILE_BYTES', '10GB'],
    ['OPENBOT_ORG_MEMORY_ITEMS', '0'],
  ])('%s=%s stops the boot with a line naming it', (name, value) => {
    expect(() => parseConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});
