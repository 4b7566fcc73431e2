import { PassThrough, Readable } from 'node:stream';
import { BodyChunks } from './body-chunks';

const text = (chunk: Uint8Array | null) => (chunk === null ? null : Buffer.from(chunk).toString());

describe('a response body read chunk by chunk', () => {
  it('answers the chunks in order, then null at the end', async () => {
    const body = new PassThrough();
    const chunks = new BodyChunks(body);
    const first = chunks.next();
    body.write('a');
    expect(text(await first)).toBe('a');
    body.write('b');
    body.end('c');
    const read = [text(await chunks.next()), text(await chunks.next()), await chunks.next(), await chunks.next()];
    expect(read).toEqual(['b', 'c', null, null]);
  });

  it('throws the body\'s error to a waiting reader and to later reads', async () => {
    const body = new PassThrough();
    const chunks = new BodyChunks(body);
    const waiting = chunks.next();
    body.destroy(new Error('reset by peer'));
    await expect(waiting).rejects.toThrow('reset by peer');
    await expect(chunks.next()).rejects.toThrow('reset by peer');
  });

  it('throws a premature close when the body closes before its end', async () => {
    const body = new PassThrough();
    const chunks = new BodyChunks(body);
    body.destroy();
    await expect(chunks.next()).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('pauses a body whose reader falls behind, and resumes it as the reader catches up', async () => {
    const body = new PassThrough();
    const chunks = new BodyChunks(body);
    for (let i = 0; i < 40; i++) body.write(`${i},`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(true);
    let joined = '';
    for (let i = 0; i < 40; i++) joined += text(await chunks.next());
    expect(joined).toBe(Array.from({ length: 40 }, (_, i) => `${i},`).join(''));
    expect(body.isPaused()).toBe(false);
  });

  it('destroys a body that was not read to its end when closed, and leaves an ended one alone', async () => {
    const open = new PassThrough();
    new BodyChunks(open).close();
    expect(open.destroyed).toBe(true);
    const done = Readable.from(['x']);
    const chunks = new BodyChunks(done);
    expect(text(await chunks.next())).toBe('x');
    expect(await chunks.next()).toBeNull();
    chunks.close();
    expect(done.readableEnded).toBe(true);
  });
});
