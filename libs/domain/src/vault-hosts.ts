/**
 * The hosts a Vault item's values may be sent to (`allowedHosts`, decision 029): a host name or a
 * `*.example.com` pattern, each optionally followed by `:port`. A pattern without a port admits
 * every port; `*.example.com` admits any name under example.com, never example.com itself.
 */

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST_PATTERN = new RegExp(`^(\\*\\.)?(?:${LABEL}\\.)*${LABEL}(?::(\\d{1,5}))?$`);
const IPV6_PATTERN = /^\[[0-9a-f:.]+\](?::(\d{1,5}))?$/;

/** Why a pattern is not a valid allowed host, or null when it is. */
export function allowedHostProblem(pattern: string): string | null {
  const value = pattern.toLowerCase();
  const match = HOST_PATTERN.exec(value) ?? IPV6_PATTERN.exec(value);
  if (match === null) return 'must be a host name, a "*.example.com" pattern or an IP address, optionally with ":port"';
  const port = value.startsWith('[') ? match[1] : match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return 'has a port outside 1-65535';
  return null;
}

/** The port a URL reaches: its own, or its scheme's default. */
function effectivePort(url: URL): string {
  if (url.port !== '') return url.port;
  return url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '';
}

/** Whether `url` reaches a host `patterns` admit; a URL that does not parse is admitted by none. */
export function hostAllowed(patterns: readonly string[], url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (host === '') return false;
  const port = effectivePort(parsed);
  return patterns.some((raw) => {
    const { name, port: wantedPort } = splitPattern(raw);
    if (wantedPort !== null && wantedPort !== port) return false;
    if (name.startsWith('*.')) return host.endsWith(name.slice(1)) && host.length > name.length - 1;
    return host === name;
  });
}

/**
 * The patterns of `after` that admit a host or port none of `before` admits: what a change of
 * `allowedHosts` would widen (empty when it only keeps or narrows). `*.a.example.com` is within
 * `*.example.com`, a pattern with a port within the same one without.
 */
export function hostsBeyond(before: readonly string[], after: readonly string[]): string[] {
  const old = before.map(splitPattern);
  return after.filter((raw) => {
    const wanted = splitPattern(raw);
    const base = wanted.name.startsWith('*.') ? wanted.name.slice(2) : wanted.name;
    return !old.some((pattern) => {
      if (pattern.port !== null && pattern.port !== wanted.port) return false;
      if (pattern.name === wanted.name) return true;
      return pattern.name.startsWith('*.') && base.endsWith(pattern.name.slice(1));
    });
  });
}

/** A pattern's name and port (normalized, null when it names none), lower case. */
function splitPattern(raw: string): { readonly name: string; readonly port: string | null } {
  const pattern = raw.toLowerCase();
  const ipv6 = pattern.startsWith('[');
  const colon = ipv6 ? pattern.indexOf(']:') + 1 || -1 : pattern.lastIndexOf(':');
  return colon > 0 ? { name: pattern.slice(0, colon), port: String(Number(pattern.slice(colon + 1))) } : { name: pattern, port: null };
}
