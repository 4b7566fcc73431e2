import { ModelFailure, type ModelStreamEvent } from '../../libs/core/src/model/model-provider';

/** Every event of a model stream that ends normally. */
export async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The `ModelFailure` a model stream ends with, and the events it gave before; fails the test when it ends normally. */
export async function failureOf(stream: AsyncIterable<ModelStreamEvent>): Promise<{ failure: ModelFailure; before: ModelStreamEvent[] }> {
  const before: ModelStreamEvent[] = [];
  try {
    for await (const event of stream) before.push(event);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelFailure);
    return { failure: error as ModelFailure, before };
  }
  throw new Error('expected the stream to fail');
}
