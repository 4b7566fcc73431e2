import { PROVIDER_MESSAGE_MAX_LENGTH, providerErrorDetail, scrubProviderText } from './provider-error';

describe('the provider error scrubber (decision 082)', () => {
  it('[ERR-01] takes out a key-like string, a bearer token and a URL inside the provider text, and keeps the rest', () => {
    const text =
      'Incorrect API key provided: sk-proj-AbCdEf1234567890XyZ. Sent with Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl; see https://platform.example.com/account/api-keys?key=sk-live-9876543210abcdef for help.';
    const scrubbed = scrubProviderText(text)!;
    expect(scrubbed).toBe('Incorrect API key provided: [redacted]. Sent with Bearer [redacted]; see [url] for help.');
    for (const secret of ['sk-proj', 'AbCdEf1234567890XyZ', 'eyJ', 'c2lnbmF0dXJl', 'platform.example.com', 'sk-live', '9876543210abcdef']) expect(scrubbed).not.toContain(secret);
  });

  it('[ERR-01] takes out named values, bare hosts, addresses and long mixed tokens, but keeps model IDs and prose', () => {
    expect(scrubProviderText('Request failed: api_key=abc123 token: "xyz" password=hunter2')).toBe('Request failed: api_key=[redacted] token: "[redacted]" password=[redacted]');
    expect(scrubProviderText('Proxy at internal.corp.example/v1/chat refused; mail ops@example.com')).toBe('Proxy at [url] refused; mail [email]');
    expect(scrubProviderText('Request req_8f3a9b2c4d5e6f7a8b9c0d1e failed')).toBe('Request [redacted] failed');
    expect(scrubProviderText('The model `gpt-4o-mini-2024-07-18` does not exist or you do not have access to it.')).toBe(
      'The model `gpt-4o-mini-2024-07-18` does not exist or you do not have access to it.',
    );
    expect(scrubProviderText('Key AKIAIOSFODNN7EXAMPLE and obk_short12 and ghp_abcdef12 leaked')).toBe('Key [redacted] and [redacted] and [redacted] leaked');
  });

  it('keeps only the first non-empty line, folds control characters and bounds the length after scrubbing', () => {
    expect(scrubProviderText('\n\n  Upstream\tfailed \u0007 badly  \nstack trace line 2\n')).toBe('Upstream failed badly');
    const long = `${'word '.repeat(100)}sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789`;
    const scrubbed = scrubProviderText(long)!;
    expect(scrubbed.length).toBe(PROVIDER_MESSAGE_MAX_LENGTH);
    expect(scrubbed.endsWith('…')).toBe(true);
    expect(scrubProviderText(`${'a'.repeat(195)} sk-secret-0123456789abcdef`)).not.toMatch(/sk-|0123/);
    expect(scrubProviderText('   \n \r\n')).toBeNull();
  });

  it('builds a detail whose status, code and message are each safe and bounded', () => {
    expect(providerErrorDetail(404, 'model_not_found', 'The model `gpt-tset` does not exist\nmore')).toEqual({ status: 404, code: 'model_not_found', message: 'The model `gpt-tset` does not exist' });
    expect(providerErrorDetail(undefined, 42, undefined)).toEqual({ status: null, code: '42', message: null });
    expect(providerErrorDetail(500, { nested: true }, 'x').code).toBeNull();
    expect(providerErrorDetail(500, `sk-${'k'.repeat(10)}1234567890`, 'x').code).toBe('[redacted]');
    expect(providerErrorDetail(500, 'c'.repeat(100), 'x').code).toHaveLength(64);
  });
});
