import { NodeListener, type BufferedEvent } from './node-listener';

/** The in-memory handover of a node's own events to its readers (EVT-02): `recent` finds the next one or says to read. */
describe('NodeListener.recent', () => {
  const id = 'execution-1';
  const events = (...seqs: number[]): BufferedEvent[] => seqs.map((seq) => ({ seq, type: 'text.delta' }));

  function listenerHolding(...seqs: number[]): { listener: NodeListener; stop: () => void } {
    const listener = new NodeListener('postgres://unused');
    // Events are kept only while a reader here waits for the execution.
    const wait = listener.waitForEvents(id, 60_000);
    listener.deliver(id, events(...seqs));
    return { listener, stop: () => wait.stop() };
  }

  it('hands over the events right after the cursor, up to the first gap', () => {
    const { listener, stop } = listenerHolding(1, 2, 3, 5, 6);
    expect(listener.recent(id, 0)!.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(listener.recent(id, 1)!.map((e) => e.seq)).toEqual([2, 3]);
    // After the gap: found by its number, although it no longer sits where its number says.
    expect(listener.recent(id, 4)!.map((e) => e.seq)).toEqual([5, 6]);
    stop();
  });

  it('answers null when the next event is not here (in a gap, before the buffer, or never handed over)', () => {
    const { listener, stop } = listenerHolding(3, 4, 6);
    expect(listener.recent(id, 4)).toBeNull(); // 5 is missing
    expect(listener.recent(id, 1)).toBeNull(); // 2 is older than the buffer
    expect(listener.recent('another', 0)).toBeNull();
    stop();
  });

  it('a reader caught up with the buffer waits without reading only after a table read that reached the end', () => {
    const { listener, stop } = listenerHolding(1, 2);
    // Never synced with the table: it must read.
    expect(listener.recent(id, 2)).toBeNull();
    // Synced at a point after which nothing arrived from elsewhere: nothing newer can be in the table.
    expect(listener.recent(id, 2, listener.syncPoint())).toEqual([]);
    // A wake-up from elsewhere since that point: read again.
    const synced = listener.syncPoint();
    listener.wake(id);
    expect(listener.recent(id, 2, synced)).toBeNull();
    // Past the buffer's end: nothing here, read.
    expect(listener.recent(id, 7, listener.syncPoint())).toBeNull();
    stop();
  });

  describe('a buffer kept whole from the creation of its execution (decision 061)', () => {
    function tracked(): NodeListener {
      const listener = new NodeListener('postgres://unused');
      listener.track(id);
      return listener;
    }

    it('[EVT-02] a reader caught up with it waits without reading: before the first event and after the last one', () => {
      const listener = tracked();
      expect(listener.recent(id, 0)).toEqual([]);
      // Buffered with no reader waiting yet: a reader that comes later finds them in memory.
      listener.deliver(id, events(1, 2));
      expect(listener.recent(id, 0)!.map((e) => e.seq)).toEqual([1, 2]);
      expect(listener.recent(id, 2)).toEqual([]);
      // A gap is not whole: the reader stops before it and then reads.
      listener.deliver(id, events(4));
      expect(listener.recent(id, 2)).toBeNull();
    });

    it('[EVT-02] is no longer whole once an event came by another path, once it dropped events off its front, or for a fallback poll', () => {
      const woken = tracked();
      woken.deliver(id, events(1));
      woken.wake(id);
      expect(woken.recent(id, 1)).toBeNull();

      const overflowing = tracked();
      overflowing.deliver(id, events(...Array.from({ length: 513 }, (_, i) => i + 1)));
      expect(overflowing.recent(id, 513)).toBeNull();

      const polled = tracked();
      polled.deliver(id, events(1));
      expect(polled.recent(id, 1, -1, false)).toBeNull();
      expect(polled.recent(id, 1)).toEqual([]);
    });

    it('[EVT-02] only an execution this node tracked counts as whole', () => {
      const { listener, stop } = listenerHolding(1, 2);
      expect(listener.recent(id, 2)).toBeNull();
      stop();
    });
  });
});
