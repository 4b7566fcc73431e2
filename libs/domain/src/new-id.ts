import { randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * Every resource ID is a UUIDv7 (RFC 9562): unique across nodes and ordered by creation time.
 * Within one millisecond the 12-bit `rand_a` field counts up (method 1 of the RFC), so IDs made
 * by one process sort in creation order, which cursor pagination relies on.
 */
export function newId<T extends string = string>(): T {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    sequence = randomBytes(2).readUInt16BE(0) & 0x7ff;
  } else {
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      ms = lastMs;
      sequence = 0;
    }
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` as T;
}
