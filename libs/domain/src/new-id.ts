import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/** Random bytes drawn from the CSPRNG a few KiB at a time; each byte is used once. */
const POOL = 4_096;
let pool = Buffer.alloc(0);
let offset = POOL;

function random(count: number): Buffer {
  if (offset + count > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL));
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + count);
  offset += count;
  return bytes;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Every resource ID is a UUIDv7 (RFC 9562): unique across nodes and ordered by creation time.
 * Within one millisecond the 12-bit `rand_a` field counts up (method 1 of the RFC), so IDs made
 * by one process sort in creation order, which cursor pagination relies on.
 */
export function newId<T extends string = string>(): T {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    sequence = random(2).readUInt16BE(0) & 0x7ff;
  } else {
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      ms = lastMs;
      sequence = 0;
    }
  }
  const b = random(8);
  const t = ms.toString(16).padStart(12, '0');
  const h = (i: number): string => HEX[b[i]!]!;
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${HEX[0x70 | (sequence >> 8)]}${HEX[sequence & 0xff]}-${HEX[0x80 | (b[0]! & 0x3f)]}${h(1)}-${h(2)}${h(3)}${h(4)}${h(5)}${h(6)}${h(7)}` as T;
}
