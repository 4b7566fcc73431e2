import { createHash, randomBytes } from 'node:crypto';

/**
 * Where workflow code reads the time (FW-04, TASK-03). The engine hands its clock to `next` and
 * to every phase, so a test clock drives time limits and schedules without waiting. Epoch ms.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to (tests, replays). Starts at `start` (default: the real now). */
export class ManualClock implements Clock {
  private at: number;

  constructor(start: number | Date = Date.now()) {
    this.at = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    this.at += ms;
  }

  set(at: number | Date): void {
    this.at = typeof at === 'number' ? at : at.getTime();
  }
}

/** A fresh execution seed: stored in the execution's sealed data when it is created. */
export function newSeed(): string {
  return randomBytes(16).toString('hex');
}

/**
 * The seeded random of one phase run: numbers in [0, 1) from the execution's seed and the step,
 * so a phase replayed after a takeover (or a retried attempt) sees the same sequence (FW-04).
 * sfc32 over a SHA-256 of the seed and step: not for secrets, only for reproducible choices.
 */
export function seededRandom(seed: string, step: number): () => number {
  const digest = createHash('sha256').update(`${seed}:${step}`).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}
