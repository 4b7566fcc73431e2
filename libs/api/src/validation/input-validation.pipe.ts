import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { InvalidInput, type InputIssue } from '@openbot/domain';

/**
 * Validates every DTO with class-validator. Unknown fields are refused; failures become one
 * InvalidInput listing each offending field by dotted path (`tools.0.name`).
 */
export function inputValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new InvalidInput(toIssues(errors)),
  });
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
