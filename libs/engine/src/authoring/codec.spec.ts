import * as codec from './codec';
import { InvalidStoredJson, type Codec } from './codec';

interface Message {
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly toolCallId?: string;
  readonly toolCalls?: ReadonlyArray<{ readonly id: string }>;
}

const message: Codec<Message> = codec.object({
  role: codec.oneOf(['user', 'assistant']),
  content: codec.string,
  toolCallId: codec.optional(codec.string),
  toolCalls: codec.optional(codec.array(codec.object({ id: codec.string }))),
});

describe('workflow codecs', () => {
  it('stores exactly the declared fields, absent optional fields stay absent, and reads them back', () => {
    const stored = message.encode({ role: 'user', content: 'hi' });
    expect(stored).toEqual({ role: 'user', content: 'hi' });
    expect(JSON.stringify(stored)).toBe('{"role":"user","content":"hi"}');
    const full: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'a' }], toolCallId: 'x' };
    expect(message.decode(JSON.parse(JSON.stringify(message.encode(full))) as never)).toEqual(full);
  });

  it.each([
    [{ role: 'user' }, 'content is not present'],
    [{ role: 'robot', content: '' }, 'role is not one of user, assistant'],
    [{ role: 'user', content: 3 }, 'content is not a string'],
    [{ role: 'user', content: '', toolCalls: [{ id: 'a' }, {}] }, 'toolCalls[1].id is not present'],
    [[], 'is not an object'],
  ])('refuses stored JSON of another shape, naming where: %j', (stored, message_) => {
    expect(() => message.decode(stored as never, 'state')).toThrow(InvalidStoredJson);
    expect(() => message.decode(stored as never, 'state')).toThrow(message_);
  });

  it('jsonObject refuses what JSON cannot hold instead of storing something that reads back different', () => {
    expect(codec.jsonObject.encode({ type: 'object', extra: undefined })).toEqual({ type: 'object' });
    expect(() => codec.jsonObject.encode({ size: Number.NaN })).toThrow('size is not a finite number');
    expect(() => codec.jsonObject.encode({ at: () => 1 })).toThrow('at is not JSON');
  });

  it('remembered: JSON this node encoded decodes to the same value; other JSON is checked', () => {
    const numbers = codec.remembered(codec.object({ n: codec.number }));
    const value = { n: 1 };
    expect(numbers.decode(numbers.encode(value))).toBe(value);
    expect(() => numbers.decode({ n: 'one' })).toThrow('n is not a number');
  });
});
