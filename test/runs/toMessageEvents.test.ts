import { describe, expect, expectTypeOf, it } from 'vitest';
import type { MessageEvent as NestMessageEvent } from '@nestjs/common';
import { of, throwError, type Observable } from 'rxjs';
import { CancelledError, EvoSciError, ExitError } from '../../src/events/errors.js';
import { RunInterruptedError, RunRequestError, UnknownRunError } from '../../src/runs/errors.js';
import { afterOf } from '../../src/runs/lastEventId.js';
import { toMessageEvents, type MessageEvent } from '../../src/runs/toMessageEvents.js';
import type { IndexedEvent } from '../../src/runs/wire.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const A = ev.text('a');
const B = ev.toolCall('ls', { path: '.' }, 'c1');
const C = ev.done('ok');

/** Indexed events, and the messages they become. */
const input = {
  a: { index: 0, event: A },
  b: { index: 1, event: B },
  c: { index: 7, event: C },
} satisfies Record<string, IndexedEvent>;
const output = {
  A: { id: '0', data: A },
  B: { id: '1', data: B },
  C: { id: '7', data: C },
} satisfies Record<string, MessageEvent>;

const end = (id: string, data: object): MessageEvent => ({ type: 'end', id, data });
const error = (id: string, name: string, message: string): MessageEvent => ({
  type: 'error',
  id,
  data: { name, message },
});

describe('toMessageEvents', () => {
  it('makes each event a message whose id is its index, then ends with `end` (completed)', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<IndexedEvent>('-a-b--c-|', input);
      expectObservable(source.pipe(toMessageEvents())).toBe('-A-B--C-(E|)', {
        ...output,
        E: end('7', { state: 'completed' }),
      });
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('passes the event itself as data, for Nest to write as JSON', () => {
    const messages: MessageEvent[] = [];
    of<IndexedEvent>(input.a)
      .pipe(toMessageEvents())
      .subscribe((message) => messages.push(message));
    expect(messages[0]!.data).toBe(A);
  });

  it('ends an empty run with `end` alone, whose id SSE parsers ignore', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<IndexedEvent>('---|').pipe(toMessageEvents())).toBe('---(E|)', {
        E: end('\0', { state: 'completed' }),
      });
    });
  });

  it('ends a run that ended with its error as `end` with its state, and completes', () => {
    const exit = new ExitError('EvoSci exited with code 2', { exitCode: 2, stderrTail: 'Traceback\nboom' });
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failed = cold<IndexedEvent>('-a-b-#', input, exit);
      expectObservable(failed.pipe(toMessageEvents())).toBe('-A-B-(E|)', {
        ...output,
        E: end('1', {
          state: 'failed',
          error: { name: 'ExitError', message: 'EvoSci exited with code 2', exitCode: 2 },
        }),
      });
      expectSubscriptions(failed.subscriptions).toBe('^----!');
      const cancelled = cold<IndexedEvent>('-a-#', input, new CancelledError('the run was cancelled'));
      expectObservable(cancelled.pipe(toMessageEvents())).toBe('-A-(E|)', {
        ...output,
        E: end('0', { state: 'cancelled', error: { name: 'CancelledError', message: 'the run was cancelled' } }),
      });
      const interrupted = cold<IndexedEvent>(
        '#',
        input,
        new RunInterruptedError('the hub stopped', { threadId: 't1' }),
      );
      expectObservable(interrupted.pipe(toMessageEvents())).toBe('(E|)', {
        E: end('\0', {
          state: 'interrupted',
          error: { name: 'RunInterruptedError', message: 'the hub stopped', threadId: 't1' },
        }),
      });
      const other = cold<IndexedEvent>('-#', input, new EvoSciError('TimeoutError: took too long'));
      expectObservable(other.pipe(toMessageEvents())).toBe('-(E|)', {
        E: end('\0', { state: 'failed', error: { name: 'EvoSciError', message: 'TimeoutError: took too long' } }),
      });
    });
  });

  it('turns any other error into `error` with its name and first line, and completes', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const unknown = cold<IndexedEvent>('#', input, new UnknownRunError('nope'));
      expectObservable(unknown.pipe(toMessageEvents())).toBe('(X|)', {
        X: error('\0', 'UnknownRunError', 'no run "nope"'),
      });
      const broker = cold<IndexedEvent>('-a--#', input, new Error('connection lost\n    at Broker.read'));
      expectObservable(broker.pipe(toMessageEvents())).toBe('-A--(X|)', {
        ...output,
        X: error('0', 'Error', 'connection lost'),
      });
      expectSubscriptions(broker.subscriptions).toBe('^---!');
      const thrown = cold<IndexedEvent>('-#', input, 'not an Error');
      expectObservable(thrown.pipe(toMessageEvents())).toBe('-(X|)', { X: error('\0', 'Error', 'not an Error') });
    });
  });

  it('does not read an error of `undefined` as a completed run', () => {
    const messages: MessageEvent[] = [];
    throwError(() => undefined)
      .pipe(toMessageEvents())
      .subscribe((message) => messages.push(message));
    expect(messages).toEqual([error('\0', 'Error', 'undefined')]);
  });

  it('unsubscribes from the run when unsubscribed early, and sends nothing more', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<IndexedEvent>('-a-b-c-|', input);
      expectObservable(source.pipe(toMessageEvents()), '^--!').toBe('-A--', output);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('keeps the last id per subscriber: a late one repeats only what it was sent', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<IndexedEvent>('-a-b-|', input);
      const messages$ = source.pipe(toMessageEvents());
      expectObservable(messages$).toBe('-A-B-(E|)', { ...output, E: end('1', { state: 'completed' }) });
      expectObservable(messages$, '--^').toBe('---B-(E|)', { ...output, E: end('1', { state: 'completed' }) });
      expectObservable(messages$, '----^').toBe('-----(E|)', { E: end('\0', { state: 'completed' }) });
      expectSubscriptions(source.subscriptions).toBe(['^----!', '--^--!', '----^!']);
    });
  });

  it('gives what a Nest @Sse() handler returns', () => {
    expectTypeOf<Observable<MessageEvent>>().toExtend<Observable<NestMessageEvent>>();
  });
});

describe('afterOf', () => {
  it('reads a decimal index', () => {
    expect(afterOf('0')).toBe(0);
    expect(afterOf('2')).toBe(2);
    expect(afterOf('007')).toBe(7);
    expect(afterOf('999999999999999')).toBe(999_999_999_999_999);
  });

  it('reads no header, or an empty one, as from the first event', () => {
    expect(afterOf(undefined)).toBeUndefined();
    expect(afterOf('')).toBeUndefined();
  });

  it.each(['-1', '1.5', '1e3', ' 2', '2 ', '0x10', 'abc', '+3', '1000000000000000', '\0', '٣'])(
    'refuses %j with a RunRequestError (400)',
    (header) => {
      let thrown: unknown;
      try {
        afterOf(header);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(RunRequestError);
      expect(thrown).toMatchObject({ status: 400, message: expect.stringContaining('Last-Event-ID') });
    },
  );

  it('quotes at most 40 characters of what it refuses', () => {
    expect(() => afterOf('x'.repeat(1000))).toThrow(`got "${'x'.repeat(40)}"`);
  });
});
