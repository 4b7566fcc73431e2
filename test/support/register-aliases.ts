import Module from 'node:module';
import { join } from 'node:path';

/**
 * jest applies `moduleNameMapper` inside test files but not in global setup, which loads the
 * database code directly: resolve the `@openbot/<lib>` aliases to the sources here too.
 */
const root = join(__dirname, '..', '..');
type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const original = loader._resolveFilename;
loader._resolveFilename = function resolveOpenbot(request: string, ...rest: unknown[]): string {
  const match = /^@openbot\/([a-z-]+)(?:\/([a-z-]+))?$/.exec(request);
  return original.call(this, match ? join(root, 'libs', match[1]!, 'src', `${match[2] ?? 'index'}.ts`) : request, ...rest);
};
