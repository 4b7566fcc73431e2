import type { Config, MasterKey } from './config';

/** The configuration with development defaults filled in: what the running node actually uses. */
export interface RuntimeConfig extends Omit<Config, 'databaseUrl' | 'masterKey'> {
  readonly databaseUrl: string;
  readonly masterKey: MasterKey;
}

/** Injection token of the RuntimeConfig. */
export const RUNTIME_CONFIG = Symbol('RuntimeConfig');
