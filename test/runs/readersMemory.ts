// Run with `node --expose-gc --import tsx`: the memory of one run held by a
// hub, then of the same run with 1,000 readers, each paused at its own place.
// Prints `{ oneCopy, thousandReaders, runBytes }` in bytes of RSS growth.
import { lastValueFrom, Subscription } from 'rxjs';
import { FlowControl } from '../../src/common/FlowControl.js';
import { runHub } from '../../src/runs/index.js';
import { toJsonl } from '../../src/events/decode/jsonl.js';
import { events, fakeEvoSci } from '../../testing/index.js';

const LINE = 50_000;
const COUNT = 400;
const gc = (globalThis as { gc?: () => void }).gc!;
const rss = () => {
  gc();
  gc();
  return process.memoryUsage().rss;
};

const hub = await runHub({
  maxLive: 2,
  keepBytes: 1 << 30,
  runOptions: () => ({
    prompt: 'memory',
    ...fakeEvoSci([{ bigLine: LINE, count: COUNT }, { lines: [toJsonl(events.done('ok'))] }]),
  }),
});

const before = rss();
const first = await hub.start({ prompt: 'one copy' });
await lastValueFrom(hub.follow(first.id));
const oneCopy = rss() - before;

const second = await hub.start({ prompt: 'a thousand readers' });
const readers = new Subscription();
for (let r = 0; r < 1000; r++) {
  const flow = new FlowControl();
  // Each reader stops reading at its own place, as a slow client would: its place waits in the log.
  const stopAt = r % (COUNT + 1);
  let read = 0;
  readers.add(
    hub.follow(second.id, { flow }).subscribe({
      next: () => {
        if (++read >= stopAt) flow.pause();
      },
      error: () => undefined,
    }),
  );
}
await lastValueFrom(hub.follow(second.id));
const thousandReaders = rss() - before - oneCopy;
readers.unsubscribe();
await hub.close();
process.stdout.write(`${JSON.stringify({ oneCopy, thousandReaders, runBytes: LINE * COUNT })}\n`);
