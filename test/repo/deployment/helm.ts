import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

/** The `helm` binary on PATH, or null (this machine has none; CI or a developer's machine may). */
export function findHelm(path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'helm');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
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
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
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
