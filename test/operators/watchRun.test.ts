import { from, lastValueFrom, map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { summarize, watchRun, type RunModel, type RunWatcher } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = {
  c: ev.toolCall('ls', { path: '.' }, { id: 'c1' }),
  r: ev.toolResult('ls', 'a b', { id: 'c1' }),
  d: ev.done('ok'),
};

/** A watcher that writes down what it hears and how the run ended, one line each. */
function notebook(): { readonly lines: string[]; readonly models: RunModel[]; watch: (model: RunModel) => RunWatcher } {
  const lines: string[] = [];
  const models: RunModel[] = [];
  return {
    lines,
    models,
    watch: (model) => {
      models.push(model);
      model.listen((c) => lines.push(c.kind === 'invocation' ? `${c.invocation.name} ${c.invocation.status}` : c.kind));
      return {
        complete: () => lines.push(`complete ${model.outcome()}`),
        fail: (error) => lines.push(`fail ${(error as Error).message}`),
        close: () => lines.push('close'),
      };
    },
  };
}

describe('watchRun', () => {
  it('passes the events on unchanged while its watcher hears the changes, then the end', () => {
    const book = notebook();
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-c-r-d-|', values);
      expectObservable(source.pipe(watchRun(book.watch))).toBe('-c-r-d-|', values);
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
    expect(book.lines).toEqual(['ls running', 'ls succeeded', 'done', 'complete completed', 'close']);
  });

  it('passes an empty run on, and tells the watcher it completed', () => {
    const book = notebook();
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('--|').pipe(watchRun(book.watch))).toBe('--|');
    });
    expect(book.lines).toEqual(['complete incomplete', 'close']);
  });

  it('passes an error on, and tells the watcher', () => {
    const book = notebook();
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-#', values, new Error('killed'));
      expectObservable(source.pipe(watchRun(book.watch))).toBe('-c-#', values, new Error('killed'));
    });
    expect(book.lines).toEqual(['ls running', 'fail killed', 'close']);
  });

  it('unsubscribes from the run when unsubscribed early, and closes the watcher', () => {
    const book = notebook();
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-c-r-d-|', values);
      expectObservable(source.pipe(watchRun(book.watch)), '^--!').toBe('-c--', values);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(book.lines).toEqual(['ls running', 'close']);
  });

  it('right before summarize(), listens to the summary’s model: one model, and the same summary', async () => {
    const events = [values.c, values.r, values.d];
    const book = notebook();
    const scheduler = marbles();
    const watched = await lastValueFrom(from(events).pipe(watchRun(book.watch), summarize({ scheduler })));
    const plain = await lastValueFrom(from(events).pipe(summarize({ scheduler })));
    expect(watched).toEqual(plain);
    expect(book.models).toHaveLength(1);
    expect(book.lines).toEqual(['ls running', 'ls succeeded', 'done', 'complete completed', 'close']);
    // With an operator between them, each has its own model; the watcher hears the same.
    const apart = notebook();
    await lastValueFrom(
      from(events).pipe(
        watchRun(apart.watch),
        map((e) => e),
        summarize({ scheduler }),
      ),
    );
    expect(apart.lines).toEqual(book.lines);
  });

  it('tells a watcher the closing changes after complete, whether or not summarize() follows', async () => {
    const scheduler = marbles();
    const open = [values.c, values.d];
    const fused = notebook();
    await lastValueFrom(from(open).pipe(watchRun(fused.watch), summarize({ scheduler })));
    const alone = notebook();
    await lastValueFrom(from(open).pipe(watchRun(alone.watch), toArray()));
    expect(fused.lines).toEqual(['ls running', 'done', 'complete completed', 'ls unfinished', 'close']);
    expect(alone.lines).toEqual(fused.lines);
  });

  it('subscribes to the source as it is when the watcher watches nothing', async () => {
    const events = [values.c, values.d];
    let models = 0;
    const passed = await lastValueFrom(
      from(events).pipe(
        watchRun(() => {
          models++;
          return undefined;
        }),
        toArray(),
      ),
    );
    expect([models, passed.length]).toEqual([1, events.length]);
    passed.forEach((event, i) => expect(event).toBe(events[i]));
  });
});
