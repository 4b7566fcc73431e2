import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkObjectKey, checkObjectPrefix, ObjectNotFound, type ObjectStore, type StoredObject } from './object-store';

/**
 * Objects as files under `<data dir>/objects` (the embedded default; production refuses it unless
 * `OBJECT_STORE_ALLOW_FS=true`). A write goes to a temporary name in the same directory and is
 * renamed into place once every byte is flushed, so a crash or an abort never leaves a partial
 * object under its key. Temporary names start with `.` and can never be a key.
 *
 * Files are 0600 and folders 0700, the root included (docs/decisions/074): organizations' files
 * are readable by the server's user only, not by every account on the host. The root is set to
 * 0700 at the first write also when it already existed, so objects an older version wrote 0644
 * cannot be reached by other users either.
 */
const FILE_MODE = 0o600;
const FOLDER_MODE = 0o700;

export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs' as const;

  private rootPrivate: Promise<void> | null = null;

  constructor(private readonly root: string) {}

  async put(key: string, body: Readable, options: { readonly signal?: AbortSignal } = {}): Promise<StoredObject> {
    const path = this.pathOf(key);
    await this.privateRoot();
    await mkdir(dirname(path), { recursive: true, mode: FOLDER_MODE });
    const temporary = join(dirname(path), `.partial-${randomBytes(8).toString('hex')}`);
    let bytes = 0;
    body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    try {
      await pipeline(body, createWriteStream(temporary, { flush: true, mode: FILE_MODE }), options.signal ? { signal: options.signal } : {});
      await rename(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    return { bytes };
  }

  async get(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    if ((await this.head(key)) === null) throw new ObjectNotFound(key);
    return createReadStream(path);
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { bytes: info.size } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    const directory = join(this.root, checkObjectPrefix(prefix));
    let entries: string[];
    try {
      entries = await readdir(directory, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const keys: string[] = [];
    for (const entry of entries.sort()) {
      const key = `${prefix}${entry.split('\\').join('/')}`;
      // Temporary names of writes in progress start with `.`: never an object.
      if (key.split('/').some((segment) => segment.startsWith('.'))) continue;
      if ((await stat(join(directory, entry)).catch(() => null))?.isFile() !== true) continue;
      keys.push(key);
      if (keys.length >= limit) break;
    }
    return keys;
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  async close(): Promise<void> {}

  /** Creates the root 0700, or makes an existing one 0700, once per store (a failure is tried again at the next write). */
  private privateRoot(): Promise<void> {
    this.rootPrivate ??= mkdir(this.root, { recursive: true, mode: FOLDER_MODE })
      .then(() => chmod(this.root, FOLDER_MODE))
      .catch((error: unknown) => {
        this.rootPrivate = null;
        throw error;
      });
    return this.rootPrivate;
  }

  private pathOf(key: string): string {
    return join(this.root, checkObjectKey(key));
  }
}
