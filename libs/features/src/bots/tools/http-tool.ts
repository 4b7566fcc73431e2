import { AnswerTooLarge, readCappedText, type ToolCall } from '@openbot/core';
import type { InputIssue } from '@openbot/domain';
import type { CallRequest, Json } from '@openbot/engine';
import { isReference, type BotTool } from '../bot-view';
import { answer, fileIdsOf } from '../../../../platform/src/turn-core/tool-answer';
import type { TurnTool } from '../../../../platform/src/turn-core/turn-tool';
import { VaultReferenceRefused, type OpenRequest, type SendActor } from '../../../../platform/src/vaults/vault-secrets';

/** How tool calls reach their endpoints: the egress client's fetch and its cap on answers. */
export interface HttpToolClient {
  readonly fetch: typeof fetch;
  /** A longer answer is not read: the model gets an error result instead (OPENBOT_TOOL_ANSWER_LIMIT). */
  readonly answerLimitBytes: number;
  /** Opens header references at the send (VaultSecrets); absent: a tool with headers is refused. */
  readonly secrets?: ToolSecrets;
}

/** The Vault side of a tool call: open references right before the send, record a refusal (ERR-01). */
export interface ToolSecrets {
  open(request: OpenRequest): Promise<string[]>;
  /**
   * A tool's sealed literal header values (its `headerSecrets` record) for a send to `url`,
   * opened; empty when the record is gone or bound to another origin (decision 068).
   */
  literals(recordId: string, url: string): Promise<Readonly<Record<string, string>>>;
  /** Saves the refusal as an error record of category `forbidden` and answers its ID. */
  recordRefusal(refusal: VaultReferenceRefused, executionId: string): Promise<string>;
}

/** Whose work a tool call is: the header references are checked against it at every send. */
export interface ToolWork {
  readonly organizationId: string;
  /** Absent in a background tool saved before headers existed: a tool with headers is then refused. */
  readonly actor?: SendActor;
  readonly executionId: string;
}

const TOOL_TIMEOUT_MS = 60_000;

/**
 * A failed HTTP tool request. `resultLost`: the request may have reached the endpoint and its
 * answer was lost (a dropped connection, a timeout): an unsafe tool then waits in
 * outcome_unknown (CALL-03). An HTTP 5xx or 429 is an answer: retried only when the tool is safe.
 */
export class HttpToolFailure extends Error {
  override readonly name = 'HttpToolFailure';
  constructor(
    message: string,
    readonly resultLost: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Calls an organization's HTTP tool: POST `url` with `{ callId, name, arguments }` and the call's
 * `Idempotency-Key` (the same on every attempt, CALL-02). A JSON answer with a string
 * `modelOutput` is used as it is, with the files its `fileIds` names (STC-09: uploaded with
 * `POST /v1/files`, sent to the model as its provider supports them); any other answer is given to the model as text. A 4xx answer is
 * an error result the model can read; arguments that are not JSON never leave the server.
 */
export async function callHttpTool(http: HttpToolClient, tool: BotTool, call: ToolCall, request: CallRequest, work: ToolWork): Promise<Json> {
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return answer(`Error: the arguments for "${call.name}" are not valid JSON.`, true);
  }
  let secretHeaders: Record<string, string>;
  try {
    secretHeaders = await openHeaders(http, tool, request, work);
  } catch (error) {
    if (!(error instanceof VaultReferenceRefused)) throw error;
    // Nothing was sent. The model reads the category and error ID; the Turn goes on (SEC-02).
    const errorId = await http.secrets!.recordRefusal(error, work.executionId);
    const failure = { category: error.category, errorId };
    const refused = answer(`Error: the tool "${call.name}" was not called: ${error.message} (category ${failure.category}, error ID ${errorId}).`, true) as { modelOutput: string; isError: boolean };
    return { ...refused, failure };
  }
  let response: Response;
  try {
    response = await http.fetch(tool.url!, {
      method: 'POST',
      // The platform's own headers last: a tool's header never replaces them.
      headers: { ...secretHeaders, 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
      body: JSON.stringify({ callId: call.callId, name: call.name, arguments: args }),
      signal: AbortSignal.any([request.signal, AbortSignal.timeout(TOOL_TIMEOUT_MS)]),
    });
  } catch (error) {
    if (request.signal.aborted) throw error;
    // A refusal before sending (egress) is not a lost result; a broken connection may be.
    const refused = (error as { safeToRetry?: unknown } | null)?.safeToRetry === false;
    if (refused) return answer(`Error: the tool "${call.name}" cannot be reached: ${(error as Error).message}`, true);
    throw new HttpToolFailure(`the tool "${call.name}" did not answer`, true, { cause: error });
  }
  let text: string;
  try {
    text = await readCappedText(response, http.answerLimitBytes, `the answer of tool "${call.name}"`);
  } catch (error) {
    // An answer over the cap is the tool's answer, unusable as it is: an error result, not a lost
    // call (a 5xx or 429 stays what its status says, whatever its body).
    if (error instanceof AnswerTooLarge && !retryableStatus(response.status)) return answer(`Error: ${error.message}.`, true);
    if (error instanceof AnswerTooLarge) throw new HttpToolFailure(`the tool "${call.name}" answered HTTP ${response.status}`, false);
    throw new HttpToolFailure(`the answer of tool "${call.name}" was cut off`, true, { cause: error });
  }
  if (retryableStatus(response.status)) {
    throw new HttpToolFailure(`the tool "${call.name}" answered HTTP ${response.status}`, false);
  }
  if (!response.ok) return answer(`Error: the tool "${call.name}" answered HTTP ${response.status}: ${text}`, true);
  const output = modelOutputOf(text);
  return answer(output.modelOutput, false, output.fileIds);
}

/**
 * The tool's header references, opened for this attempt only (FW-08): VaultSecrets checks the
 * item, field, `allowedHosts` and the member's `vaults.use` again now, and the identity after it.
 * The values live in this send's memory only, never in the saved call, an event or a log line.
 */
async function openHeaders(http: HttpToolClient, tool: BotTool, request: CallRequest, work: ToolWork): Promise<Record<string, string>> {
  const entries = Object.entries(tool.headers ?? {});
  if (entries.length === 0) return {};
  if (http.secrets === undefined || work.actor === undefined) throw new VaultReferenceRefused('this call has no member to check its Vault rights against');
  const references = entries.flatMap(([name, value]) => (isReference(value) ? [{ name, reference: value }] : []));
  const values =
    references.length === 0
      ? []
      : await http.secrets.open({
          organizationId: work.organizationId,
          actor: work.actor,
          url: tool.url!,
          references: references.map((r) => r.reference),
          ...(request.checkIdentity ? { checkIdentity: request.checkIdentity } : {}),
        });
  const headers: Record<string, string> = Object.fromEntries(references.map((r, index) => [r.name, values[index]!]));
  // Literal values, sealed with the tool when it was saved (decision 036): opened for this send only.
  const literalNames = entries.filter(([, value]) => !isReference(value)).map(([name]) => name);
  if (literalNames.length > 0) {
    // The record opens only for the origin it was sealed for (decision 068): never for another URL.
    const literals = tool.headerSecrets === undefined ? {} : await http.secrets.literals(tool.headerSecrets, tool.url!);
    for (const name of literalNames) {
      const value = literals[name];
      if (value === undefined) throw new VaultReferenceRefused(`the value of header "${name}" was replaced or removed since this Turn saved its Bot, or was saved for another origin`);
      headers[name] = value;
    }
  }
  // A value that cannot be a header is refused here, before fetch could name it in an error.
  if (Object.values(headers).some((value) => /[\r\n\0]/.test(value))) throw new VaultReferenceRefused('a referenced value cannot be sent as a header (it has a line break)');
  return headers;
}

function retryableStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

function modelOutputOf(text: string): { modelOutput: string; fileIds: string[] } {
  try {
    const body = JSON.parse(text) as unknown;
    if (body !== null && typeof body === 'object' && typeof (body as { modelOutput?: unknown }).modelOutput === 'string') {
      return { modelOutput: (body as { modelOutput: string }).modelOutput, fileIds: fileIdsOf((body as { fileIds?: unknown }).fileIds) };
    }
  } catch {
    // Plain text: the model reads it as it is.
  }
  return { modelOutput: text, fileIds: [] };
}

/**
 * The `http` tool kind (decision 078): the saved definition and arguments, sent once per attempt
 * under the call's own call-log entry (STC-07); a `safe` tool is repeated with the same key.
 */
export function httpTool(http: HttpToolClient): TurnTool {
  return {
    kind: 'http',
    answers: 'send',
    servedBy: 'http',
    needsChild: false,
    validate: endpointIssues,
    repeatSafe: (tool) => tool.retry === 'safe',
    send: (tool, call, request, context) =>
      callHttpTool(http, tool, call, request, { organizationId: context.organizationId, executionId: context.executionId, ...(context.actor ? { actor: context.actor } : {}) }),
  };
}

/** An http or background tool's route: a `url` that is an absolute http or https URL without credentials. */
export function endpointIssues(tool: BotTool, index: number): InputIssue[] {
  if (tool.url === undefined) return [{ path: `tools.${index}.url`, message: `a ${tool.kind ?? 'client'} tool needs a url` }];
  if (!isPlainHttpUrl(tool.url)) return [{ path: `tools.${index}.url`, message: 'url must be an absolute http or https URL without a username or password' }];
  return [];
}

function isPlainHttpUrl(value: string): boolean {
  // The WHATWG parser also takes `http:host` and surrounding spaces; only the written-out form counts.
  if (!/^https?:\/\/\S+$/i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
}
