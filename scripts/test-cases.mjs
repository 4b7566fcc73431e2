// Finds the test cases of a jest spec file without running it and without any dependency (the
// capability map must generate from a bare clone, before `npm ci`). A small tokenizer skips
// comments, strings, template literals and regular expressions, and tracks the brackets, so it
// knows which `describe` blocks enclose each `it`/`test` call.
//
// Counted: `it`, `test`, and their `.each`, `.only` and `.concurrent` forms (an `.each` title
// is its template, as written). Not counted: `describe` itself, `.todo` and `.skip`, `xit`.

const TEST = new Set(['it', 'test', 'fit']);
const SUITE = new Set(['describe', 'fdescribe']);
const SKIPPED = new Set(['xit', 'xtest', 'xdescribe']);
const NOT_A_CASE = new Set(['todo', 'skip']);
// After one of these, a `/` starts a regular expression rather than a division.
const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await']);

/** Splits TypeScript source into the tokens this scanner needs: words, punctuation, strings. */
function tokenize(source) {
  const tokens = [];
  let i = 0;
  const n = source.length;
  const previousAllowsRegex = () => {
    const last = tokens[tokens.length - 1];
    if (!last) return true;
    if (last.kind === 'word') return REGEX_AFTER_WORD.has(last.value);
    if (last.kind === 'string' || last.kind === 'template') return false;
    return !(last.value === ')' || last.value === ']' || last.value === '}');
  };
  // Reads a template literal from its opening backtick; returns its raw text and end index.
  const readTemplate = (start) => {
    let j = start + 1;
    let plain = true;
    while (j < n && source[j] !== '`') {
      if (source[j] === '\\') j += 2;
      else if (source[j] === '$' && source[j + 1] === '{') {
        plain = false;
        j = skipExpression(j + 2);
      } else j += 1;
    }
    return { raw: source.slice(start + 1, j), plain, end: j + 1 };
  };
  // Skips a `${ … }` substitution (which may hold strings and templates) up to its closing brace.
  const skipExpression = (start) => {
    let depth = 1;
    let j = start;
    while (j < n && depth > 0) {
      const c = source[j];
      if (c === "'" || c === '"') j = readQuoted(j).end;
      else if (c === '`') j = readTemplate(j).end;
      else {
        if (c === '{') depth += 1;
        else if (c === '}') depth -= 1;
        j += 1;
      }
    }
    return j;
  };
  const readQuoted = (start) => {
    const quote = source[start];
    let j = start + 1;
    let value = '';
    while (j < n && source[j] !== quote && source[j] !== '\n') {
      if (source[j] === '\\') {
        value += source[j + 1] ?? '';
        j += 2;
      } else {
        value += source[j];
        j += 1;
      }
    }
    return { value, end: j + 1 };
  };

  while (i < n) {
    const c = source[i];
    if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      const { value, end } = readQuoted(i);
      tokens.push({ kind: 'string', value, at: i });
      i = end;
    } else if (c === '`') {
      const { raw, end } = readTemplate(i);
      tokens.push({ kind: 'template', value: raw, at: i });
      i = end;
    } else if (c === '/' && previousAllowsRegex()) {
      let j = i + 1;
      let inClass = false;
      while (j < n && source[j] !== '\n' && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j += 1;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j += 1;
      }
      j += 1;
      while (j < n && /[a-z]/i.test(source[j])) j += 1;
      tokens.push({ kind: 'regex', value: source.slice(i, j), at: i });
      i = j;
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(source[j])) j += 1;
      tokens.push({ kind: 'word', value: source.slice(i, j), at: i });
      i = j;
    } else if (/\s/.test(c)) {
      i += 1;
    } else if (/\d/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w.]/.test(source[j])) j += 1;
      tokens.push({ kind: 'number', value: source.slice(i, j), at: i });
      i = j;
    } else {
      tokens.push({ kind: 'punct', value: c, at: i });
      i += 1;
    }
  }
  return tokens;
}

/** Index just past the bracket group that opens at `tokens[start]` (`(`, `[` or `{`). */
function skipGroup(tokens, start) {
  let depth = 0;
  for (let k = start; k < tokens.length; k += 1) {
    const t = tokens[k];
    if (t.kind !== 'punct') continue;
    if ('([{'.includes(t.value)) depth += 1;
    else if (')]}'.includes(t.value)) {
      depth -= 1;
      if (depth === 0) return k + 1;
    }
  }
  return tokens.length;
}

/**
 * Reads a jest call starting at `tokens[k]` (a word): `it(…)`, `it.each(table)(…)`,
 * `describe.each\`…\`(…)`, `test.concurrent.each(…)(…)`. Returns the call's kind, its title and
 * the index of the `(` that opens its arguments, or null when this is not such a call.
 */
function readCall(tokens, k) {
  const head = tokens[k].value;
  const before = tokens[k - 1];
  if (before && before.kind === 'punct' && before.value === '.') return null;
  if (!TEST.has(head) && !SUITE.has(head) && !SKIPPED.has(head)) return null;
  let counted = !SKIPPED.has(head);
  let j = k + 1;
  while (tokens[j]?.value === '.' && tokens[j + 1]?.kind === 'word') {
    const modifier = tokens[j + 1].value;
    if (NOT_A_CASE.has(modifier)) counted = false;
    j += 2;
    if (modifier === 'each') {
      if (tokens[j]?.kind === 'template') j += 1;
      else if (tokens[j]?.value === '(') j = skipGroup(tokens, j);
      else return null;
    }
  }
  if (tokens[j]?.value !== '(') return null;
  const title = tokens[j + 1];
  if (!title || (title.kind !== 'string' && title.kind !== 'template')) return null;
  const kind = SUITE.has(head) || head === 'xdescribe' ? 'suite' : 'case';
  return { kind, counted, title: title.value, open: j };
}

/**
 * Every test case of a spec file, with the titles of the `describe` blocks around it (outermost
 * first). A `describe` is never a case of its own.
 */
export function testCases(source) {
  const tokens = tokenize(source);
  const cases = [];
  // Open describe blocks: their title and the index where their argument list closes.
  const suites = [];
  const closing = new Map();
  for (let k = 0; k < tokens.length; k += 1) {
    while (suites.length > 0 && k >= suites[suites.length - 1].end) suites.pop();
    if (tokens[k].kind !== 'word') continue;
    const call = readCall(tokens, k);
    if (!call) continue;
    if (call.kind === 'suite') {
      let end = closing.get(call.open);
      if (end === undefined) closing.set(call.open, (end = skipGroup(tokens, call.open)));
      suites.push({ title: call.title, end, counted: call.counted });
    } else if (call.counted && suites.every((s) => s.counted)) {
      cases.push({ title: call.title, suites: suites.map((s) => s.title) });
    }
  }
  return cases;
}

const RULE_PREFIX = /^((?:\[[A-Z]+-\d+\]\s*)+)/;

/** The rule IDs a title names up front (`[CALL-03][RES-02] …`), and the title without them. */
export function splitRuleIds(title) {
  const m = title.match(RULE_PREFIX);
  if (!m) return { ids: [], text: title };
  return { ids: m[1].match(/[A-Z]+-\d+/g), text: title.slice(m[1].length) };
}

/**
 * The rules each test case proves: the IDs its own title names, and those named by an
 * enclosing `describe` (jest's full test name holds both). Returns `[ruleId, display]` pairs;
 * a case under a naming `describe` is shown as `that describe › … › the case`.
 */
export function ruleClaims(source) {
  const claims = [];
  for (const c of testCases(source)) {
    const own = splitRuleIds(c.title);
    const seen = new Set();
    for (const id of own.ids) {
      seen.add(id);
      claims.push([id, own.text]);
    }
    c.suites.forEach((suiteTitle, depth) => {
      for (const id of splitRuleIds(suiteTitle).ids) {
        if (seen.has(id)) continue;
        seen.add(id);
        const path = [...c.suites.slice(depth), c.title].map((t) => splitRuleIds(t).text);
        claims.push([id, path.join(' › ')]);
      }
    });
  }
  return claims;
}
