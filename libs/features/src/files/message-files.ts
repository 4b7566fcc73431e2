import type { FilePart, FilePartType } from '@openbot/core';
import { InvalidInput, isUuid, type InputIssue } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { Readable } from 'node:stream';
import { parseModelReference } from '../../../platform/src/models/model-reference';
import type { ModelProviderKind } from '../../../platform/src/model-providers/model-provider-view';
import { filePartsOf } from '../../../platform/src/models/model-calls';
import { ObjectNotFound, type ObjectStore } from '../../../platform/src/object-store/object-store';
import { essenceOf, IMAGE_CONTENT_TYPES, TEXT_CONTENT_TYPES } from './file-content';

/** Most files one message may carry. */
export const MAX_MESSAGE_FILES = 10;

/** The largest file a model is sent inline (base64 image or PDF, or text): bigger ones are refused. */
export const MAX_MODEL_FILE_BYTES = 20 * 1024 * 1024;

/** The text a model reads in place of a file that was deleted after its message was sent. */
export const DELETED_FILE_TEXT = 'This file was deleted; its content is no longer available.';

/** How a file of this type reaches a model: as text, an image or a PDF document; null when no model takes it. */
export function filePartTypeOf(contentType: string): FilePartType | null {
  const essence = essenceOf(contentType);
  if (IMAGE_CONTENT_TYPES.includes(essence)) return 'image';
  if (essence === 'application/pdf') return 'document';
  if (TEXT_CONTENT_TYPES.includes(essence) || essence.startsWith('text/')) return 'text';
  return null;
}

/**
 * Checks the files a message attaches for the model of `botModel` (`<provider>/<model>`): each ID
 * names a file of the organization (ready, not being uploaded) that the Bot's provider takes as a
 * part and that is small enough to send. Anything else is 400 InvalidInput on `fileIds.N`.
 */
export async function checkMessageFiles(db: Queryable, organizationId: string, botModel: string, fileIds: readonly string[]): Promise<void> {
  if (fileIds.length === 0) return;
  const issues: InputIssue[] = [];
  if (fileIds.length > MAX_MESSAGE_FILES) throw new InvalidInput([{ path: 'fileIds', message: `a message carries at most ${MAX_MESSAGE_FILES} files` }]);
  const ids = fileIds.filter(isUuid);
  const { rows } = await db.query<{ id: string; content_type: string; bytes: string; kind: ModelProviderKind | null }>({
    name: 'files.message_files',
    text: `SELECT f.id, f.content_type, f.bytes::text AS bytes, p.kind
             FROM files f LEFT JOIN model_providers p ON p.organization_id = f.organization_id AND p.name = $3
            WHERE f.organization_id = $1 AND f.id = ANY($2::uuid[]) AND f.state = 'ready'`,
    values: [organizationId, ids, parseModelReference(botModel).provider],
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  fileIds.forEach((id, index) => {
    const path = `fileIds.${index}`;
    const row = byId.get(id);
    if (row === undefined) return issues.push({ path, message: 'no such file in this organization' });
    if (fileIds.indexOf(id) !== index) return issues.push({ path, message: 'the file is named twice' });
    const type = filePartTypeOf(row.content_type);
    // A provider deleted since the Bot was saved: the Turn fails on it anyway; a file is not why.
    const parts = row.kind === null ? [] : filePartsOf(row.kind);
    if (type === null || (row.kind !== null && !parts.includes(type))) {
      return issues.push({ path, message: `the Bot's model provider cannot take a file of type ${essenceOf(row.content_type)}` });
    }
    if (Number(row.bytes) > MAX_MODEL_FILE_BYTES) return issues.push({ path, message: `a file sent to a model has at most ${MAX_MODEL_FILE_BYTES} bytes` });
    return undefined;
  });
  if (issues.length > 0) throw new InvalidInput(issues);
}

/**
 * The files as a model receives them, in order: a text file's content, an image or a PDF as base64.
 * A file that is gone (deleted, or never the organization's) becomes a short text that says so, so
 * later Turns still know it was there. Read at the model call's send, never saved with the Turn.
 */
export async function readFileParts(db: Queryable, store: ObjectStore, organizationId: string, fileIds: readonly string[]): Promise<FilePart[]> {
  if (fileIds.length === 0) return [];
  const { rows } = await db.query<{ id: string; name: string; content_type: string; object_key: string; bytes: string }>({
    name: 'files.parts',
    text: `SELECT id, name, content_type, object_key, bytes::text AS bytes FROM files WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND state = 'ready'`,
    values: [organizationId, fileIds.filter(isUuid)],
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  const parts: FilePart[] = [];
  for (const id of fileIds) {
    const row = byId.get(id);
    const gone: FilePart = { type: 'text', name: `file ${id}`, text: DELETED_FILE_TEXT };
    const type = row === undefined ? null : filePartTypeOf(row.content_type);
    if (row === undefined || type === null || Number(row.bytes) > MAX_MODEL_FILE_BYTES) {
      parts.push(row === undefined ? gone : { type: 'text', name: row.name, text: `[a file of type ${essenceOf(row.content_type)} that cannot be shown to this model]` });
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = await readAll(await store.get(row.object_key));
    } catch (error) {
      // Deleted between the read and the open: the file is gone.
      if (!(error instanceof ObjectNotFound)) throw error;
      parts.push(gone);
      continue;
    }
    const essence = essenceOf(row.content_type);
    if (type === 'text') parts.push({ type: 'text', name: row.name, text: bytes.toString('utf8') });
    else if (type === 'image') parts.push({ type: 'image', name: row.name, mediaType: essence, data: bytes.toString('base64') });
    else parts.push({ type: 'document', name: row.name, mediaType: 'application/pdf', data: bytes.toString('base64') });
  }
  return parts;
}

/** Tokens an image part is reckoned at (providers scale images to about 1,600 tokens at most). */
const IMAGE_TOKENS = 1_600;

/**
 * A pessimistic token estimate of the files as a model receives them, for the call's reservation
 * (USE-02): text as its characters (about 4 bytes a token), an image at IMAGE_TOKENS, a PDF as
 * its bytes over 4; a file that is gone costs its short note.
 */
export async function estimateFileTokens(db: Queryable, organizationId: string, fileIds: readonly string[]): Promise<number> {
  if (fileIds.length === 0) return 0;
  const { rows } = await db.query<{ id: string; content_type: string; bytes: string }>({
    name: 'files.token_estimate',
    text: `SELECT id, content_type, bytes::text AS bytes FROM files WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND state = 'ready'`,
    values: [organizationId, [...new Set(fileIds.filter(isUuid))]],
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return fileIds.reduce((sum, id) => {
    const row = byId.get(id);
    const type = row === undefined ? null : filePartTypeOf(row.content_type);
    if (row === undefined || type === null) return sum + 16;
    return sum + (type === 'image' ? IMAGE_TOKENS : Math.ceil(Math.min(Number(row.bytes), MAX_MODEL_FILE_BYTES) / 4));
  }, 0);
}

/** The object's bytes, at most MAX_MODEL_FILE_BYTES of them (the row said how many). */
async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > MAX_MODEL_FILE_BYTES) {
      body.destroy();
      throw new Error('the stored object is larger than its file says');
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
