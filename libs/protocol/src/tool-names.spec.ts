import { modelToolName } from './tool-names';

const CONNECTION = '0190a8e2-5b7c-7d3e-9f01-23456789abcd';

describe('modelToolName (contract: Tools on a Bot, kind app)', () => {
  it('keeps a valid name nobody else has', () => {
    expect(modelToolName(CONNECTION, 'get-sum', new Set(['echo']))).toBe('get-sum');
  });
  it('prefixes a name another tool of the Bot has with the last 8 hex digits of the connection ID', () => {
    expect(modelToolName(CONNECTION, 'echo', new Set(['echo']))).toBe('6789abcd_echo');
  });
  it('replaces every invalid character and cuts to 64', () => {
    expect(modelToolName(CONNECTION, 'files.read/all', new Set())).toBe('6789abcd_files_read_all');
    const long = modelToolName(CONNECTION, `${'x'.repeat(70)}.y`, new Set());
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});
