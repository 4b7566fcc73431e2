import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The S3 settings of a running s3rver, as the server reads them from its environment. */
export interface S3Server {
  readonly endpoint: string;
  readonly env: Readonly<Record<string, string>>;
  readonly config: {
    readonly endpoint: string;
    readonly bucket: string;
    readonly region: string;
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly forcePathStyle: boolean;
  };
  stop(): Promise<void>;
}

/**
 * Starts s3rver in a child process on loopback (test/support/s3rver-process.cjs) with the bucket
 * `openbot`; s3rver accepts its documented default credentials `S3RVER`/`S3RVER`.
 */
export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'openbot-s3rver-'));
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 's3rver-process.cjs'), directory], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /S3RVER (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before it listened: ${err}`)));
  });
  const config = { endpoint, bucket: 'openbot', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
  return {
    endpoint,
    config,
    env: {
      OBJECT_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_BUCKET: config.bucket,
      S3_REGION: config.region,
      S3_ACCESS_KEY_ID: config.accessKeyId,
      S3_SECRET_ACCESS_KEY: config.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}
