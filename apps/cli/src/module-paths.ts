import Module from 'node:module';
import { join } from 'node:path';

/**
 * Resolves `@openbot/<lib>` in the compiled CLI (tsc keeps the specifiers as written; tsconfig
 * `paths` only inform the compiler). Imported first by main. The CLI only ever asks for
 * `@openbot/client` (dependency-cruiser's cli-only-client rule).
 */
const distRoot = join(__dirname, '..', '..', '..');
type Resolve = (request: string, ...rest: unknown[]) => string;
// Node's own resolver, not in its types: the module object with it.
const moduleWithResolve = Module as typeof Module & { _resolveFilename: Resolve };
const original = moduleWithResolve._resolveFilename;
moduleWithResolve._resolveFilename = function resolveOpenbot(request: string, ...rest: unknown[]): string {
  const match = /^@openbot\/([a-z-]+)(?:\/([a-z-]+))?$/.exec(request);
  const target = match ? join(distRoot, 'libs', match[1]!, 'src', `${match[2] ?? 'index'}.js`) : request;
  return original.call(this, target, ...rest);
};
