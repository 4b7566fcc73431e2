import type { ChatMessage } from '@openbot/core';
import type { Database } from '../../../../platform/src/database/sql';
import { estimateFileTokens, readFileParts } from '../../files/message-files';
import type { ObjectStore } from '../../../../platform/src/object-store/object-store';
import type { TurnMessage } from '../../../../platform/src/turn-core/turn-state';

/** Where a Turn reads the files its messages carry. */
export interface TurnFileDeps {
  readonly db: Database;
  readonly store: ObjectStore;
}

/**
 * The messages as a model call sends them: each message's file IDs become its `files` (text,
 * image or PDF parts, as the adapter supports them; a file deleted since is a short text that
 * says so). Run at the send, so the bytes live only in that attempt's memory (decision 036).
 */
export async function withFileParts(deps: TurnFileDeps | undefined, organizationId: string, messages: readonly TurnMessage[]): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  for (const { fileIds, ...message } of messages) {
    if (fileIds === undefined || fileIds.length === 0) {
      out.push(message);
      continue;
    }
    const files = deps === undefined
      ? fileIds.map((id) => ({ type: 'text' as const, name: `file ${id}`, text: 'This file cannot be read on this server.' }))
      : await readFileParts(deps.db, deps.store, organizationId, fileIds);
    out.push({ ...message, files });
  }
  return out;
}

/** The files' share of a prompt's token estimate (the reservation counts them, USE-02); 0 without files. */
export async function fileTokens(deps: TurnFileDeps | undefined, organizationId: string, messages: readonly TurnMessage[]): Promise<number> {
  const fileIds = messages.flatMap((message) => message.fileIds ?? []);
  if (deps === undefined || fileIds.length === 0) return 0;
  return estimateFileTokens(deps.db, organizationId, fileIds);
}
