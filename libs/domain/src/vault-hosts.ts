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
    const pattern = raw.toLowerCase();
    const ipv6 = pattern.startsWith('[');
    const colon = ipv6 ? pattern.indexOf(']:') + 1 || -1 : pattern.lastIndexOf(':');
    const name = colon > 0 ? pattern.slice(0, colon) : pattern;
    const wantedPort = colon > 0 ? pattern.slice(colon + 1) : null;
    if (wantedPort !== null && String(Number(wantedPort)) !== port) return false;
    if (name.startsWith('*.')) return host.endsWith(name.slice(1)) && host.length > name.length - 1;
    return host === name;
  });
}
