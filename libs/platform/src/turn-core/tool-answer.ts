import type { Json } from '@openbot/engine';

/** What a tool call answers the model with (STC-09). */
export interface ToolAnswer {
  readonly modelOutput: string;
  readonly isError: boolean;
  /** Files (IDs of the organization's files) the answer hands the model beside its text (STC-09). */
  readonly fileIds?: readonly string[];
  /** A failed background tool's own category and error ID, carried as they are (ERR-01). */
  readonly failure?: { readonly category: string; readonly errorId: string };
}

/** Longest tool answer kept for the model; the rest is cut with a note. */
const MAX_OUTPUT_CHARS = 64_000;

/** Most files one tool result may hand the model. */
const MAX_RESULT_FILES = 10;

/** The file IDs a result names: strings only, the first MAX_RESULT_FILES (an unknown one reaches the model as a note). */
export function fileIdsOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((id): id is string => typeof id === 'string' && id.length <= 64).slice(0, MAX_RESULT_FILES);
}

export function answer(modelOutput: string, isError: boolean, fileIds: readonly string[] = []): Json {
  const cut = modelOutput.length > MAX_OUTPUT_CHARS ? `${modelOutput.slice(0, MAX_OUTPUT_CHARS)}\n[cut: ${modelOutput.length - MAX_OUTPUT_CHARS} more characters]` : modelOutput;
  return fileIds.length > 0 ? { modelOutput: cut, isError, fileIds: [...fileIds] } : { modelOutput: cut, isError };
}

/** A saved answer, or an operator's decided result of an unknown call, as a ToolAnswer. */
export function toToolAnswer(saved: Json): ToolAnswer {
  if (saved !== null && typeof saved === 'object' && !Array.isArray(saved) && typeof saved.modelOutput === 'string') {
    const failure = saved.failure;
    const carried =
      failure !== null && typeof failure === 'object' && !Array.isArray(failure) && typeof failure.category === 'string' && typeof failure.errorId === 'string'
        ? { failure: { category: failure.category, errorId: failure.errorId } }
        : {};
    const files = fileIdsOf(saved.fileIds);
    return { modelOutput: saved.modelOutput, isError: saved.isError === true, ...carried, ...(files.length > 0 ? { fileIds: files } : {}) };
  }
  return { modelOutput: JSON.stringify(saved), isError: false };
}
