import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { InvalidInput, type InputIssue } from '@openbot/domain';

/**
 * Validates every DTO with class-validator. Unknown fields are refused; failures become one
 * InvalidInput listing each offending field by dotted path (`tools.0.name`).
 */
export function inputValidationPipe(): ValidationPipe {
  return new InputValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new InvalidInput(toIssues(errors)),
  });
}

/** Deeper bodies are refused before class-transformer recurses through them (a stack overflow is a 500). */
const MAX_BODY_DEPTH = 100;

/**
 * Checks the raw input before the DTO sees it, one rule for every string a request carries into
 * the use cases (body fields at any depth and their keys, and query parameters): too deep a
 * nesting, strings holding U+0000 (which PostgreSQL text and jsonb cannot store) and strings
 * holding a lone UTF-16 surrogate (no Unicode text, so no UTF-8 form: stored it would become
 * U+FFFD, or fail in the sealing layer) are input errors naming the field, not faults (ERR-02).
 * Path parameters (`:id`, `:memoryId`, ...) meet the same rule, named by the parameter, before any
 * use case sees them: a `%00` in a path ID never reaches SQL (a lock key or a query would fail on
 * it). Each use case then checks an ID's shape and answers a malformed one like a missing one (404);
 * the router refuses broken percent-encoding, the only way to a lone surrogate in a URL.
 * Headers never need it: Node reads them as Latin-1 and refuses NUL.
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const issues = rawInputIssues(value, metadata.type === 'body' ? '' : (metadata.data ?? ''));
      if (issues.length > 0) throw new InvalidInput(issues);
    }
    return super.transform(value, metadata);
  }
}

function stringIssue(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!value.isWellFormed()) return 'must be valid Unicode text (it holds a lone UTF-16 surrogate)';
  return null;
}

function rawInputIssues(input: unknown, root: string): InputIssue[] {
  const issues: InputIssue[] = [];
  const pending: Array<[value: unknown, path: string, depth: number]> = [[input, root, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path, depth] = next;
    if (typeof value === 'string') {
      const message = stringIssue(value);
      if (message !== null) issues.push({ path, message });
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_BODY_DEPTH) return [{ path: '', message: `body must not be nested deeper than ${MAX_BODY_DEPTH} levels` }];
      for (const [key, child] of Object.entries(value)) {
        const childPath = path === '' ? key : `${path}.${key}`;
        // A key is stored too (jsonb objects such as tool parameters): the same rule, named by the key's path.
        const keyMessage = stringIssue(key);
        if (keyMessage !== null) issues.push({ path: childPath, message: `key ${keyMessage}` });
        pending.push([child, childPath, depth + 1]);
      }
    }
  }
  return issues;
}

export function toIssues(errors: readonly ValidationError[], prefix = ''): InputIssue[] {
  const issues: InputIssue[] = [];
  for (const error of errors) {
    const path = error.property === undefined || error.property === '' ? prefix : prefix === '' ? error.property : `${prefix}.${error.property}`;
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      issues.push({ path, message: rule === 'unknownValue' ? 'body must be a JSON object' : message });
    }
    if (error.children && error.children.length > 0) issues.push(...toIssues(error.children, path));
  }
  return issues.length > 0 || errors.length === 0 ? issues : [{ path: prefix, message: 'is not valid' }];
}
