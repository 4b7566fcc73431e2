/** A JSON form of any thrown value, with its `cause` chain, for the sealed error record. */
export interface CauseDescription {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: string;
  readonly cause?: CauseDescription;
}

export function describeCause(value: unknown, depth = 0): CauseDescription {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return {
      name: value.name,
      message: value.message,
      ...(value.stack !== undefined ? { stack: value.stack } : {}),
      ...(typeof code === 'string' ? { code } : {}),
      ...(value.cause !== undefined && depth < 5 ? { cause: describeCause(value.cause, depth + 1) } : {}),
    };
  }
  let message: string;
  try {
    message = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    message = String(value);
  }
  return { name: typeof value, message };
}
