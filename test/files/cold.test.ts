import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, fromJsonlFile } from '../../index.js';
import { fixturePath, fixtureTruth } from '../support/collect.js';
import { eventually } from '../support/processes.js';

const research = fixturePath('research-run.jsonl');
const { events: count } = fixtureTruth<{ events: number }>('research-run.jsonl');
const all = <T>(source$: Observable<T>) => lastValueFrom(source$.pipe(toArray()));

describe('cold file sources', () => {
  it('fromJsonlFile reads the file again at each subscription', async () => {
    const events$ = fromJsonlFile(research);
    const first = await all(events$);
    expect(first).toHaveLength(count);
    expect(await all(events$)).toEqual(first);
  });

  it('fromJsonl calls a function that opens the source once per subscription', async () => {
    let opened = 0;
    const events$ = fromJsonl(() => {
      opened++;
      return createReadStream(research);
    });
    expect(opened).toBe(0);
    const first = await all(events$);
    const second = await all(events$);
    expect([opened, first.length, second.length]).toEqual([2, count, count]);
  });

  it('a second subscription to a stream it already read errors, saying how to read it again', async () => {
    const events$ = fromJsonl(createReadStream(research));
    expect(await all(events$)).toHaveLength(count);
    await expect(all(events$)).rejects.toThrow(
      /read by an earlier subscription.*fromJsonl\(\(\) => createReadStream\(path\)\)/,
    );
    const generated = fromJsonl(
      (function* () {
        yield '{"type": "text", "content": "a"}\n';
      })(),
    );
    expect(await all(generated)).toHaveLength(1);
    await expect(all(generated)).rejects.toThrow(TypeError);
    // What can be read again still is.
    const lines = ['{"type": "text", "content": "a"}\n'];
    expect(await all(fromJsonl(lines))).toEqual(await all(fromJsonl(lines)));
    expect(await all(fromJsonl(Readable.from(lines)))).toHaveLength(1);
  });

  it('fromJsonlFile errors with the reason a file cannot be read', async () => {
    await expect(all(fromJsonlFile('/nonexistent/run.jsonl'))).rejects.toThrow(/ENOENT/);
    expect(() => fromJsonlFile(42 as never)).toThrow(/path must be a string or a file URL/);
  });
});

describe('unsubscribing from a Node stream', () => {
  it('destroys a stream that has nothing more to read at once', async () => {
    const quiet = new Readable({ read: () => undefined });
    quiet.push('{"type": "text", "content": "a"}\n');
    let seen: unknown;
    const subscription = fromJsonl(quiet).subscribe((event) => (seen = event));
    // Unsubscribed while the reader waits for a chunk that will not come.
    await eventually(() => seen !== undefined && quiet.readableLength === 0);
    await new Promise((resolve) => setImmediate(resolve));
    subscription.unsubscribe();
    expect(seen).toEqual({ type: 'text', content: 'a' });
    expect(quiet.destroyed).toBe(true);
  });
});
