import { InvalidInput } from '@openbot/domain';

const COMMAND_KEY = /^[\x21-\x7e]{1,200}$/;

/** The request's `Idempotency-Key` (1 to 200 visible ASCII characters), or null without one. */
export function commandKeyOf(headers: Record<string, string | undefined>): string | null {
  const key = headers['idempotency-key'];
  if (key !== undefined && !COMMAND_KEY.test(key)) {
    throw new InvalidInput([{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 200 visible ASCII characters' }]);
  }
  return key ?? null;
}
