import { streamEvents, type ExecutionEvent, type OpenbotClient, type StreamItem } from '@openbot/client';
import { ExecutionNotCompleted, type ProviderAnswer } from '../context/exit-codes';

/**
 * Reads an execution's events until `execution.ended`, handing each to `onItem` (awaited, so the
 * next event waits for what it prints); drops and faults
 * are resumed by `streamEvents` (Last-Event-ID), so `onItem` sees every event exactly once.
 * Throws `ExecutionNotCompleted` (exit 4) when the execution ended in another state than `completed`.
 */
export async function followExecution(
  client: OpenbotClient,
  executionId: string,
  onItem: (item: StreamItem) => void | Promise<void>,
  options: { after?: number } = {},
): Promise<ExecutionEvent> {
  for await (const item of streamEvents(client, executionId, { ...(options.after !== undefined ? { after: options.after } : {}) })) {
    await onItem(item);
    if (item.seq !== null && item.type === 'execution.ended') {
      const state = typeof item.state === 'string' ? item.state : 'unknown';
      if (state !== 'completed') {
        const detail = item.detail !== null && typeof item.detail === 'object' ? (item.detail as ProviderAnswer) : undefined;
        throw new ExecutionNotCompleted(state, typeof item.errorId === 'string' ? item.errorId : undefined, typeof item.category === 'string' ? item.category : undefined, detail);
      }
      return item;
    }
  }
  // streamEvents only returns after execution.ended.
  throw new Error(`the event stream of ${executionId} ended early`);
}
