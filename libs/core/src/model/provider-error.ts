/**
 * What a model provider said when it refused a call, in a form safe to show to the caller
 * (decision 082): the HTTP status, the provider's own error code and the first line of its
 * message, with anything that looks like a key, a token, a URL or an address taken out, and
 * bounded in length. The full answer stays only in the sealed error record (ERR-01).
 */
export interface ProviderErrorDetail {
  /** The HTTP status the provider answered; null for an error event inside a stream. */
  readonly status: number | null;
  /** The provider's error code or type (`model_not_found`, `overloaded_error`); null when it named none. */
  readonly code: string | null;
  /** The first line of the provider's message, scrubbed; null when it said nothing. */
  readonly message: string | null;
}

/** The longest message a detail keeps, in characters (a longer one is cut and ends with `…`). */
export const PROVIDER_MESSAGE_MAX_LENGTH = 200;
const CODE_MAX_LENGTH = 64;

const REDACTED = '[redacted]';

/** Each rule in turn: a URL can carry a key in its query, so URLs go first, then whole tokens, then what is left. */
const RULES: ReadonlyArray<readonly [RegExp, string | ((match: string, ...groups: string[]) => string)]> = [
  // Any URL, whatever its scheme: it may name an internal host or carry a key in its query.
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, '[url]'],
  // A bare host with a path (`api.example.com/v1/...`).
  [/\b(?:[a-z0-9-]+\.)+[a-z]{2,}\/[^\s"'<>`]*/gi, '[url]'],
  // An e-mail address.
  [/\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g, '[email]'],
  // A JSON Web Token (three base64url parts, the first a JSON object).
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g, REDACTED],
  // An authorization scheme and its credential.
  [/\b(bearer|basic|token)(\s+)[^\s"',;]+/gi, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`],
  // `api_key=…`, `"secret": "…"`, `password: …`: the name stays, the value goes.
  [
    /\b((?:api[_-]?|access[_-]?|secret[_-]?|private[_-]?)?(?:key|token|secret|password|passwd|credential|authorization)s?)(["']?\s*[:=]\s*["']?)[^\s"',;]+/gi,
    (_m, name: string, separator: string) => `${name}${separator}${REDACTED}`,
  ],
  // Keys with a well-known prefix, even short ones: `sk-…`, `sk-ant-…`, `obk_…`, `ghp_…`, `xoxb-…`, `AKIA…`.
  [/\b(?:sk|pk|rk|obk|ghp|gho|ghs|ghu|ghr|xox[abprs])[-_][A-Za-z0-9_-]{6,}/g, REDACTED],
  [/\bAKIA[0-9A-Z]{12,}\b/g, REDACTED],
];

/** A word of 16 or more letters and digits that mixes both: a key, a token or a hash, never prose. */
const LONG_MIXED = /[A-Za-z0-9_+/=-]{16,}/g;

function looksSecret(word: string): boolean {
  return (word.match(/[A-Za-z0-9]{16,}/g) ?? []).some((run) => /[0-9]/.test(run) && /[A-Za-z]/.test(run));
}

/**
 * The first non-empty line of a provider's text with keys, tokens, URLs and addresses replaced
 * (`[redacted]`, `[url]`, `[email]`), control characters and runs of spaces folded, and at most
 * `maxLength` characters. The whole line is scrubbed before it is cut, so a cut never leaves part
 * of a secret behind. Null when nothing is left.
 */
export function scrubProviderText(text: string, maxLength: number = PROVIDER_MESSAGE_MAX_LENGTH): string | null {
  const line = text.split(/\r\n|\r|\n/).find((l) => l.trim() !== '') ?? '';
  let scrubbed = line;
  for (const [pattern, replacement] of RULES) scrubbed = scrubbed.replace(pattern, replacement as string);
  scrubbed = scrubbed.replace(LONG_MIXED, (word) => (looksSecret(word) ? REDACTED : word));
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  scrubbed = scrubbed.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim();
  if (scrubbed === '') return null;
  return scrubbed.length > maxLength ? `${scrubbed.slice(0, maxLength - 1).trimEnd()}…` : scrubbed;
}

/** The safe detail of a provider's error answer: each part scrubbed and bounded. */
export function providerErrorDetail(status: number | null | undefined, code: unknown, message: string | null | undefined): ProviderErrorDetail {
  const codeText = typeof code === 'string' || typeof code === 'number' ? scrubProviderText(String(code), CODE_MAX_LENGTH) : null;
  return {
    status: typeof status === 'number' && Number.isInteger(status) ? status : null,
    code: codeText,
    message: typeof message === 'string' ? scrubProviderText(message) : null,
  };
}
