import { InvalidInput } from '@openbot/domain';
import type { Remote } from '@openbot/protocol';
import { referenceCheckUrl } from './app-client';
import { prepareValues, referencesOf } from './connection-values';

const ITEM = '0190d3a4-1111-7000-8000-000000000001';
const remote: Remote = {
  type: 'streamable-http',
  url: 'https://{tenant}.example.com/mcp/{path}',
  headers: [{ name: 'X-Api-Key', isRequired: true, isSecret: true }],
  variables: { tenant: {}, path: {} },
};

describe('connection values (Vault references and literals)', () => {
  it('[SEC-02] stores a reference as given and a literal as null (sealed), and lists the references with their paths', () => {
    const { stored, secrets } = prepareValues(remote, true, { tenant: 'acme', path: { vaultItemId: ITEM, field: 'path' } }, { 'X-Api-Key': { vaultItemId: ITEM, field: 'key', prefix: 'Key ' } });
    expect(stored).toEqual({ variables: { tenant: null, path: { vaultItemId: ITEM, field: 'path' } }, headers: { 'X-Api-Key': { vaultItemId: ITEM, field: 'key', prefix: 'Key ' } } });
    expect(secrets).toEqual({ variables: { tenant: 'acme' }, headers: {} });
    expect(referencesOf(stored).map((r) => r.path)).toEqual(['variables.path', 'headers.X-Api-Key']);
    // Referenced variables are checked against the host the values go to.
    expect(referenceCheckUrl(remote, stored.variables, secrets.variables)).toBe('https://acme.example.com/mcp/_');
  });

  it('[SEC-02] refuses a reference for a variable of the host (its allowedHosts could not be checked) and a malformed reference', () => {
    const run = (variables: Record<string, unknown>, headers: Record<string, unknown>): string[] => {
      try {
        prepareValues(remote, true, variables as never, headers as never);
        return [];
      } catch (error) {
        return (error as InvalidInput).issues.map((i) => i.path);
      }
    };
    expect(run({ tenant: { vaultItemId: ITEM, field: 'tenant' }, path: 'x' }, { 'X-Api-Key': 'k' })).toEqual(['variables.tenant']);
    expect(run({ tenant: 'a', path: 'x' }, { 'X-Api-Key': { vaultItemId: 'not-a-uuid', field: 'key' } })).toEqual(['headers.X-Api-Key.vaultItemId']);
  });
});
