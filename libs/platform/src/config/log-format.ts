import type { Config } from './config';

/** How log lines are written: one JSON object a line, or pino-pretty's coloured lines for a person. */
export type LogFormat = 'json' | 'pretty';

/**
 * The log format of a process, from its configuration and whether its log stream is a terminal.
 * `LOG_FORMAT=json|pretty` is obeyed as given. `auto` (the default) prints pretty lines only in
 * development on a terminal: production and anything piped or redirected (a log shipper, a file,
 * `docker logs`, a test capturing output) keep JSON, which machines read.
 */
export function logFormatFor(config: Pick<Config, 'production' | 'logFormat'>, isTTY: boolean): LogFormat {
  if (config.logFormat !== 'auto') return config.logFormat;
  return !config.production && isTTY ? 'pretty' : 'json';
}
