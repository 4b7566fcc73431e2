import { parseConfig } from './config';
import { logFormatFor } from './log-format';

/** The settings production needs to parse at all; the log format does not depend on them. */
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://u:p@db.example:5432/openbot',
  OPENBOT_MASTER_KEY: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  OBJECT_STORE: 's3',
  S3_BUCKET: 'openbot',
};

const formatOf = (env: Record<string, string>, isTTY: boolean): string => logFormatFor(parseConfig(env), isTTY);

describe('logFormatFor (NODE_ENV, a terminal, LOG_FORMAT)', () => {
  it('prints pretty lines only in development on a terminal when LOG_FORMAT is unset', () => {
    expect(formatOf({}, true)).toBe('pretty');
    expect(formatOf({ NODE_ENV: 'development' }, true)).toBe('pretty');
    expect(formatOf({ NODE_ENV: 'test' }, true)).toBe('pretty');
  });

  it('keeps JSON in development when the output is not a terminal (a pipe, a file, a test)', () => {
    expect(formatOf({}, false)).toBe('json');
    expect(formatOf({ LOG_FORMAT: 'auto' }, false)).toBe('json');
  });

  it('keeps JSON in production, on a terminal too', () => {
    expect(formatOf(PRODUCTION, true)).toBe('json');
    expect(formatOf(PRODUCTION, false)).toBe('json');
  });

  it('LOG_FORMAT=json or pretty is obeyed whatever the environment and terminal', () => {
    for (const env of [{}, PRODUCTION]) {
      for (const isTTY of [true, false]) {
        expect(formatOf({ ...env, LOG_FORMAT: 'json' }, isTTY)).toBe('json');
        expect(formatOf({ ...env, LOG_FORMAT: 'pretty' }, isTTY)).toBe('pretty');
      }
    }
  });
});
