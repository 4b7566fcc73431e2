import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ObjectNotFound, type ObjectStore } from '@openbot/platform';

/** Reads a stream to its end. */
async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** A stream of `total` pseudo-random bytes in 64 KiB chunks, and their sha256. */
function generated(total: number): { stream: Readable; sha256: () => string } {
  const hash = createHash('sha256');
  let left = total;
  const stream = new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const chunk = randomBytes(Math.min(left, 64 * 1024));
      left -= chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex') };
}

/**
 * The one contract every object-store adapter passes (ARCH-04): the filesystem adapter and the
 * S3 adapter against s3rver run these same cases.
 */
export function objectStoreContract(name: string, open: () => Promise<{ store: ObjectStore; close: () => Promise<void> }>): void {
  describe(`[ARCH-04] object store contract: ${name}`, () => {
    let store: ObjectStore;
    let close: () => Promise<void>;
    const key = (): string => `contract/${randomBytes(8).toString('hex')}`;

    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => {
      await close();
    });

    it('[PLAT-03] stores a small object and reads the same bytes back', async () => {
      const k = key();
      const body = Buffer.from('hello, object store');
      expect(await store.put(k, Readable.from([body]), { contentType: 'text/plain' })).toEqual({ bytes: body.length });
      expect(await store.head(k)).toEqual({ bytes: body.length });
      expect(await bytesOf(await store.get(k))).toEqual(body);
    });

    it('[ARCH-04] stores an empty object', async () => {
      const k = key();
      expect(await store.put(k, Readable.from([]))).toEqual({ bytes: 0 });
      expect(await store.head(k)).toEqual({ bytes: 0 });
      expect((await bytesOf(await store.get(k))).length).toBe(0);
    });

    it('streams an object larger than one S3 part (20 MiB) and keeps every byte', async () => {
      const k = key();
      const source = generated(20 * 1024 * 1024 + 17);
      expect(await store.put(k, source.stream)).toEqual({ bytes: 20 * 1024 * 1024 + 17 });
      const back = createHash('sha256');
      for await (const chunk of await store.get(k)) back.update(chunk as Buffer);
      expect(back.digest('hex')).toBe(source.sha256());
    });

    it('replaces an object written twice under one key', async () => {
      const k = key();
      await store.put(k, Readable.from([Buffer.from('first')]));
      await store.put(k, Readable.from([Buffer.from('second!')]));
      expect((await bytesOf(await store.get(k))).toString()).toBe('second!');
    });

    it('a missing object: get throws ObjectNotFound, head answers null', async () => {
      const k = key();
      await expect(store.get(k)).rejects.toBeInstanceOf(ObjectNotFound);
      expect(await store.head(k)).toBeNull();
    });

    it('delete removes the object, and deleting it again succeeds (a retried delete is safe)', async () => {
      const k = key();
      await store.put(k, Readable.from([Buffer.from('bye')]));
      await store.delete(k);
      expect(await store.head(k)).toBeNull();
      await expect(store.delete(k)).resolves.toBeUndefined();
    });

    it('[ARCH-04] a write whose source fails leaves no object under its key, not even a partial one', async () => {
      const k = key();
      let sent = 0;
      const failing = new Readable({
        read() {
          sent += 1;
          if (sent > 3) return void this.destroy(new Error('client went away'));
          this.push(randomBytes(4 * 1024 * 1024));
        },
      });
      await expect(store.put(k, failing)).rejects.toThrow('client went away');
      expect(await store.head(k)).toBeNull();
    });

    it('an aborted write leaves no object', async () => {
      const k = key();
      const abort = new AbortController();
      let sent = 0;
      const slow = new Readable({
        read() {
          sent += 1;
          if (sent === 2) abort.abort();
          this.push(randomBytes(1024 * 1024));
        },
      });
      await expect(store.put(k, slow, { signal: abort.signal })).rejects.toThrow();
      slow.destroy();
      expect(await store.head(k)).toBeNull();
    });

    it('[ARCH-04] lists the keys under a prefix in key order, a page at a time, and nothing under an empty one', async () => {
      const prefix = `${key()}/`;
      const keys = [`${prefix}a`, `${prefix}b/1`, `${prefix}b/2`, `${prefix}c`];
      for (const k of keys) await store.put(k, Readable.from([Buffer.from(k)]));
      await store.put(`${prefix.slice(0, -1)}-sibling`, Readable.from([Buffer.from('x')]));
      expect(await store.list(prefix, 100)).toEqual(keys);
      expect(await store.list(prefix, 2)).toEqual(keys.slice(0, 2));
      for (const k of keys) await store.delete(k);
      expect(await store.list(prefix, 100)).toEqual([]);
      expect(await store.list(`${key()}/`, 100)).toEqual([]);
    });

    it('refuses keys outside the platform shape (no traversal)', async () => {
      for (const bad of ['../etc/passwd', 'a/../b', '.hidden', 'a//b', '/abs', 'a b']) {
        await expect(store.put(bad, Readable.from([Buffer.from('x')]))).rejects.toThrow('invalid object key');
        await expect(store.get(bad)).rejects.toThrow('invalid object key');
      }
    });
  });
}
