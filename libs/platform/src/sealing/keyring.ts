import type { MasterKey } from '../config/config';

/** The current key seals; every known key (current and retired) can open. */
export class Keyring {
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(
    readonly current: MasterKey,
    old: readonly MasterKey[] = [],
  ) {
    const all = new Map<string, Buffer>();
    for (const key of old) all.set(key.id, key.key);
    all.set(current.id, current.key);
    this.byId = all;
  }

  find(keyId: string): Buffer | undefined {
    return this.byId.get(keyId);
  }
}
