import type { EngineSealer } from './ports';
import type { Json } from './json';

/** JSON sealed for one row and purpose: an envelope cannot be moved to another row. */
export class SealedJson {
  constructor(private readonly sealer: EngineSealer) {}

  seal(value: Json | undefined, aad: string): { keyId: string; data: Buffer } {
    return this.sealer.seal(Buffer.from(JSON.stringify(value ?? null), 'utf8'), aad);
  }

  open(keyId: string, data: Buffer, aad: string): Json {
    return JSON.parse(this.sealer.open({ keyId, data }, aad).toString('utf8')) as Json;
  }
}

export const aad = {
  executionData: (executionId: string) => `openbot.execution.data:${executionId}`,
  event: (executionId: string, type: string) => `openbot.execution.event:${executionId}:${type}`,
  callResult: (callId: string) => `openbot.execution.call:${callId}`,
  signal: (signalId: string) => `openbot.execution.signal:${signalId}`,
  identity: (executionId: string) => `openbot.execution.identity:${executionId}`,
  scheduleInput: (scheduleId: string) => `openbot.schedule.input:${scheduleId}`,
  scheduleIdentity: (scheduleId: string) => `openbot.schedule.identity:${scheduleId}`,
};
