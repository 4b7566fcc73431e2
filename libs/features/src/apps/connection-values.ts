import { InvalidInput, type InputIssue } from '@openbot/domain';
import type { Remote } from '@openbot/protocol';
import { referenceIssues } from '../../../platform/src/vaults/vault-view';
import type { ConnectionSecrets, StoredValue } from './app-view';

/** A header or variable value as a request gives it: a literal, or a Vault reference. */
export type GivenValue = string | { readonly vaultItemId: string; readonly field: string; readonly prefix?: string };

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
/** Headers a connection may not set: the transport owns them, or they would change where the request goes. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'connection', 'transfer-encoding', 'last-event-id']);

/**
 * Checks the selected remote's values (GRANT-06): every variable and header the remote requires
 * is given (or has a fixed value or a default), a value with choices is one of them, a card's
 * remote takes only the inputs it declares (a bare endpoint takes any header, e.g. a static
 * `Authorization`), and no reserved header is set. Answers what is stored (names → null for
 * literals) and what is sealed (the literals).
 */
export function prepareValues(
  remote: Remote,
  card: boolean,
  variables: Readonly<Record<string, GivenValue>>,
  headers: Readonly<Record<string, GivenValue>>,
): { stored: { variables: Record<string, StoredValue>; headers: Record<string, StoredValue> }; secrets: ConnectionSecrets } {
  const issues: InputIssue[] = [];
  const stored = { variables: {} as Record<string, StoredValue>, headers: {} as Record<string, StoredValue> };
  const secrets = { variables: {} as Record<string, string>, headers: {} as Record<string, string> };

  const take = (kind: 'variables' | 'headers', name: string, value: GivenValue, choices: readonly string[] | undefined): void => {
    if (typeof value !== 'string') {
      // A Vault reference is stored as given; its rights and allowedHosts are checked at save (the caller) and before each send.
      const wrong = referenceIssues(value, `${kind}.${name}`);
      if (wrong.length > 0) return void issues.push(...wrong);
      if (kind === 'variables' && inHost(remote.url, name)) return void issues.push({ path: `${kind}.${name}`, message: `"${name}" is part of the remote's host: it must be a literal value, not a Vault reference` });
      stored[kind][name] = { vaultItemId: value.vaultItemId, field: value.field, ...(value.prefix === undefined ? {} : { prefix: value.prefix }) };
      return;
    }
    if (choices !== undefined && choices.length > 0 && !choices.includes(value)) issues.push({ path: `${kind}.${name}`, message: `${name} must be one of ${choices.join(', ')}` });
    stored[kind][name] = null;
    secrets[kind][name] = value;
  };

  const declaredVariables = new Set(Object.keys(remote.variables));
  for (const [name, value] of Object.entries(variables)) {
    if (!declaredVariables.has(name)) issues.push({ path: `variables.${name}`, message: `the remote has no variable "${name}"` });
    else if (remote.variables[name]!.value !== undefined) issues.push({ path: `variables.${name}`, message: `"${name}" has a fixed value on the card` });
    else take('variables', name, value, remote.variables[name]!.choices);
  }
  for (const [name, input] of Object.entries(remote.variables)) {
    if (input.value === undefined && input.default === undefined && variables[name] === undefined && (input.isRequired ?? true)) {
      issues.push({ path: `variables.${name}`, message: `the remote needs the variable "${name}"` });
    }
  }

  const declaredHeaders = new Map(remote.headers.map((h) => [h.name.toLowerCase(), h]));
  for (const [name, value] of Object.entries(headers)) {
    const declared = declaredHeaders.get(name.toLowerCase());
    if (!HEADER_NAME.test(name)) issues.push({ path: `headers.${name}`, message: 'not an HTTP header name' });
    else if (RESERVED_HEADERS.has(name.toLowerCase())) issues.push({ path: `headers.${name}`, message: `the "${name}" header is set by OpenBot itself` });
    else if (card && declared === undefined) issues.push({ path: `headers.${name}`, message: `the remote declares no header "${name}"` });
    else if (declared?.value !== undefined) issues.push({ path: `headers.${name}`, message: `"${name}" has a fixed value on the card` });
    else take('headers', name, value, declared?.choices);
  }
  for (const header of remote.headers) {
    const given = Object.keys(headers).some((name) => name.toLowerCase() === header.name.toLowerCase());
    if (header.isRequired === true && header.value === undefined && header.default === undefined && !given) issues.push({ path: `headers.${header.name}`, message: `the remote needs the header "${header.name}"` });
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  return { stored, secrets };
}

/** Whether the URL template has the variable `name` in its scheme, host or port. */
function inHost(template: string, name: string): boolean {
  const authority = /^[^:]*:\/\/([^/?#]*)/.exec(template)?.[1] ?? template;
  return authority.includes(`{${name}}`);
}

/** The Vault references among prepared values, with the field path each came from. */
export function referencesOf(stored: { variables: Readonly<Record<string, StoredValue>>; headers: Readonly<Record<string, StoredValue>> }): Array<{ path: string; reference: Exclude<StoredValue, null> }> {
  const out: Array<{ path: string; reference: Exclude<StoredValue, null> }> = [];
  for (const kind of ['variables', 'headers'] as const) for (const [name, value] of Object.entries(stored[kind])) if (value !== null) out.push({ path: `${kind}.${name}`, reference: value });
  return out;
}
