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
 * Checks the raw body before the DTO sees it: too deep a nesting, and strings holding U+0000,
 * which PostgreSQL text and jsonb cannot store, are input errors, not database faults (ERR-02).
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body') {
      const issues = rawBodyIssues(value);
      if (issues.length > 0) throw new InvalidInput(issues);
    }
    return super.transform(value, metadata);
  }
}

function rawBodyIssues(body: unknown): InputIssue[] {
  const issues: InputIssue[] = [];
  const pending: Array<[value: unknown, path: string, depth: number]> = [[body, '', 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path, depth] = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) issues.push({ path, message: 'must not contain the NUL character (U+0000)' });
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_BODY_DEPTH) return [{ path: '', message: `body must not be nested deeper than ${MAX_BODY_DEPTH} levels` }];
      for (const [key, child] of Object.entries(value)) pending.push([child, path === '' ? key : `${path}.${key}`, depth + 1]);
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
