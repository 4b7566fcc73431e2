import type { ApiKeyId } from '@openbot/domain';
import { createHash } from 'node:crypto';
import { newId } from '@openbot/domain';
import { generateSecret, hashSecret, keyIdOf, secretMatches, tokensEqual } from './api-key-secret';

describe('API key secrets', () => {
  const id = newId<ApiKeyId>();

  it('a secret is obk_<id hex>_<43 base64url chars> and carries its key ID', () => {
    const secret = generateSecret(id);
    expect(secret).toMatch(/^obk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    expect(secret).toContain(id.replaceAll('-', ''));
    expect(keyIdOf(secret)).toBe(id);
  });

  it('two secrets for the same key differ (256 random bits)', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => generateSecret(id)));
    expect(secrets.size).toBe(100);
  });

  it('the stored form is the SHA-256 of the secret, never the secret itself', () => {
    const secret = generateSecret(id);
    const hash = hashSecret(secret);
    expect(hash).toHaveLength(32);
    expect(hash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(hash.toString('latin1')).not.toContain(secret.slice(37));
  });

  it('secretMatches accepts the secret and refuses any other value', () => {
    const secret = generateSecret(id);
    const hash = hashSecret(secret);
    expect(secretMatches(secret, hash)).toBe(true);
    expect(secretMatches(generateSecret(id), hash)).toBe(false);
    expect(secretMatches(`${secret}x`, hash)).toBe(false);
    expect(secretMatches(secret.slice(0, -1), hash)).toBe(false);
    expect(secretMatches('', hash)).toBe(false);
  });

  it('secretMatches refuses a stored hash of another length without throwing', () => {
    const secret = generateSecret(id);
    expect(secretMatches(secret, Buffer.alloc(0))).toBe(false);
    expect(secretMatches(secret, hashSecret(secret).subarray(0, 16))).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['no prefix', 'abc'],
    ['another prefix', 'obx_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + 'A'.repeat(43)],
    ['upper-case hex', 'obk_0193A2B45C6D7E8F9A0B1C2D3E4F5A6B_' + 'A'.repeat(43)],
    ['short id', 'obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6_' + 'A'.repeat(43)],
    ['short random part', 'obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + 'A'.repeat(42)],
    ['long random part', 'obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + 'A'.repeat(44)],
    ['bad characters', 'obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + '+'.repeat(43)],
    ['surrounding space', ' obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + 'A'.repeat(43)],
    ['admin token', 'oba_' + 'A'.repeat(43)],
  ])('keyIdOf refuses a malformed secret (%s)', (_name, secret) => {
    expect(keyIdOf(secret)).toBeNull();
  });

  it('keyIdOf restores the dashed UUID form', () => {
    expect(keyIdOf('obk_0193a2b45c6d7e8f9a0b1c2d3e4f5a6b_' + 'A'.repeat(43))).toBe('0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b');
  });

  it('tokensEqual compares tokens of any length', () => {
    expect(tokensEqual('oba_secret-token', 'oba_secret-token')).toBe(true);
    expect(tokensEqual('oba_secret-token', 'oba_secret-tokeN')).toBe(false);
    expect(tokensEqual('short', 'a much longer token than the other')).toBe(false);
    expect(tokensEqual('', '')).toBe(true);
    expect(tokensEqual('', 'x')).toBe(false);
  });
});
