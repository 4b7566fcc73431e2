import { OpenbotApiError, OpenbotConnectionError, sendMessage, type MessageAdmission, type OpenbotClient } from '@openbot/client';
import type { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type Context } from '../context/context';
import { ReplyPrinter } from '../context/reply-printer';
import { approvalNote } from './chat-approvals';
import { followExecution } from './follow';

const SEND_ATTEMPTS = 3;

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function chatCommand(program: Command, context: Context): void {
  program
    .command('chat <chatId> <message>')
    .description('send a message and print the reply as it streams; a tool call waiting for approval is shown on stderr with the commands that decide it (exit 4 when the Turn does not complete)')
    .option('--idempotency-key <key>', 'the command key (default: a new one); the same key and message never send twice')
    .option('--file <fileId>', 'a file (from `openbot files upload`) the model gets with the message (repeat for several; the message may then be "")', collect)
    .option('--json', 'print the admission, then every event, as JSON lines')
    .action(async (chatId: string, message: string, options: { idempotencyKey?: string; json?: boolean; file?: string[] }) => {
      const client = await connect(context);
      const admission = await send(client, chatId, message, options.idempotencyKey ?? randomUUID(), options.file ?? []);
      if (options.json) {
        context.io.out(`${JSON.stringify(admission)}\n`);
        await followExecution(client, admission.executionId, (item) => context.io.out(`${JSON.stringify(item)}\n`));
        return;
      }
      const printer = new ReplyPrinter(context.io);
      try {
        await followExecution(client, admission.executionId, async (item) => {
          if (item.seq === null) return;
          printer.push(item);
          // A Turn waiting for a person's decision says so (on stderr: stdout stays the reply).
          const note = await approvalNote(client, item);
          if (note !== undefined) printer.note(note);
        });
      } finally {
        printer.end();
      }
    });
}

/**
 * Sends once, retrying a lost answer or a server fault with the same Idempotency-Key: the server
 * answers the same ids, so a retry never starts a second Turn (docs/http-api.md "Idempotency").
 */
async function send(client: OpenbotClient, chatId: string, content: string, idempotencyKey: string, fileIds: readonly string[]): Promise<MessageAdmission> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendMessage(client, chatId, content, { idempotencyKey, fileIds });
    } catch (error) {
      const retryable = error instanceof OpenbotConnectionError || (error instanceof OpenbotApiError && error.isServerFault);
      if (!retryable || attempt >= SEND_ATTEMPTS) throw error;
      await sleep(500 * 2 ** (attempt - 1));
    }
  }
}
