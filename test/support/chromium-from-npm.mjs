// Unpacks the Chromium that the npm package @sparticuz/chromium ships inside its tarball (a
// brotli-compressed headless shell, the NSS/expat libraries it links against, and a font), once
// per package version, into node_modules/.cache/openbot-chromium/<version>, and prints where it
// is as one JSON line: {"executablePath", "libraryPath", "fontconfigFile"}.
// Run as a child process by test/support/chromium.ts: the package is ESM only, the specs are not.
// The package unpacks into os.tmpdir(); pointing TMPDIR at a fresh staging folder and renaming
// that folder into place makes a half-written unpack (an interrupted run) or two runs at once harmless.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// The package exports only its entry (build/index.js); its folder holds package.json and bin/.
const packageDir = resolve(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))), '..');
const version = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version;
const cache = join(root, 'node_modules', '.cache', 'openbot-chromium');
const target = join(cache, version);

const describe = (dir) => ({
  executablePath: join(dir, 'chromium'),
  libraryPath: join(dir, 'al2023', 'lib'),
  fontconfigFile: join(dir, 'fonts.conf'),
});

if (!existsSync(join(target, 'ready'))) {
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(join(cache, `${version}.partial-`));
  process.env.TMPDIR = staging;
  const { default: Chromium, inflate } = await import('@sparticuz/chromium');
  await Chromium.executablePath(); // chromium, fonts/, and SwiftShader's libraries into TMPDIR
  await inflate(join(packageDir, 'bin', 'al2023.tar.br')); // libnss3, libnspr4, libexpat, ...
  writeFileSync(
    join(staging, 'fonts.conf'),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${target}/fonts</dir>\n  <cachedir>${target}/fonts-cache</cachedir>\n</fontconfig>\n`,
  );
  writeFileSync(join(staging, 'ready'), '');
  try {
    renameSync(staging, target);
  } catch {
    // Another run put the same version in place first: use that one.
    rmSync(staging, { recursive: true, force: true });
  }
}
process.stdout.write(`${JSON.stringify(describe(target))}\n`);
