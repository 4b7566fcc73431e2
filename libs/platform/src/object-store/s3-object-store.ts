import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { S3Config } from '../config/config';
import { checkObjectKey, checkObjectPrefix, ObjectNotFound, type ObjectStore, type StoredObject } from './object-store';

/** S3 parts must be at least 5 MiB (but the last): the smallest part bounds what one upload holds in memory. */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * Objects in an S3 bucket (`OBJECT_STORE=s3`). The endpoint is the operator's configuration, like
 * `DATABASE_URL`, not an organization-supplied URL: it is not subject to the egress policy
 * (docs/decisions/028-object-storage-and-files.md).
 *
 * A write is a multipart upload read part by part from the stream into one reused part buffer;
 * a body shorter than one part is a single PutObject. A failed write aborts the multipart upload,
 * so no object appears under the key. The SDK's default request checksums are off
 * (`WHEN_REQUIRED`): on streamed bodies they break S3-compatible servers such as s3rver.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint !== null ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.accessKeyId !== null && config.secretAccessKey !== null
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  async put(key: string, body: Readable, options: { readonly contentType?: string; readonly signal?: AbortSignal } = {}): Promise<StoredObject> {
    checkObjectKey(key);
    const send = { ...(options.signal ? { abortSignal: options.signal } : {}) };
    const contentType = options.contentType ? { ContentType: options.contentType } : {};
    let uploadId: string | null = null;
    const parts: Array<{ ETag: string; PartNumber: number }> = [];
    // One part buffer per upload, filled in place and reused for every part: no per-part garbage.
    let part: Buffer | null = null;
    let filled = 0;
    let total = 0;
    const flushPart = async (): Promise<void> => {
      if (uploadId === null) {
        const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ...contentType }), send);
        uploadId = created.UploadId ?? null;
        if (uploadId === null) throw new Error('S3 answered no UploadId');
      }
      const number = parts.length + 1;
      const body = part!.subarray(0, filled);
      const answer = await this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: number, Body: body, ContentLength: body.length }),
        send,
      );
      filled = 0;
      parts.push({ ETag: answer.ETag ?? '', PartNumber: number });
    };
    try {
      // Async iteration pauses the source while a part is sent: backpressure reaches the client.
      for await (const chunk of body as AsyncIterable<Buffer>) {
        total += chunk.length;
        let offset = 0;
        while (offset < chunk.length) {
          part ??= Buffer.allocUnsafe(PART_BYTES);
          const copied = chunk.copy(part, filled, offset);
          filled += copied;
          offset += copied;
          if (filled === PART_BYTES) await flushPart();
        }
      }
      if (uploadId === null) {
        const whole = part === null ? Buffer.alloc(0) : part.subarray(0, filled);
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: whole, ContentLength: whole.length, ...contentType }), send);
        return { bytes: total };
      }
      if (filled > 0) await flushPart();
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
        send,
      );
      return { bytes: total };
    } catch (error) {
      const started: string | null = uploadId;
      if (started !== null) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: started })).catch(() => undefined);
      }
      throw error;
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key) }));
      return answer.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) throw new ObjectNotFound(key);
      throw error;
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key) }));
      return { bytes: answer.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    // One page of the server's own size (S3: 1000), cut here: s3rver fails a page it has to truncate below its size.
    const answer = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: checkObjectPrefix(prefix) }));
    return (answer.Contents ?? []).flatMap((object) => (object.Key === undefined ? [] : [object.Key])).slice(0, limit);
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key) }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
