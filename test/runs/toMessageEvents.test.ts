import { describe, expect, expectTypeOf, it } from 'vitest';
import type { MessageEvent as NestMessageEvent } from '@nestjs/common';
import { of, throwError, type Observable } from 'rxjs';
import { CancelledError, EvoSciError, ExitError } from '../../src/events/errors.js';
import { RunInterruptedError, RunRequestError, UnknownRunError } from '../../src/runs/errors.js';
import { afterOf, hasSeenEnd } from '../../src/runs/lastEventId.js';
import { toMessageEvents, type MessageEvent } from '../../src/runs/toMessageEvents.js';
import type { IndexedEvent, RunState, RunStatus } from '../../src/runs/wire.js';
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
/** What a client is told of an error that is not the hub's: its message may carry the server's paths. */
const WITHHELD = 'the server failed to send the rest of this run';
const error = (id: string, name: string, message: string): MessageEvent => ({
  type: 'error',
  id,
  data: { name, message },
});

/** The status of a run in `state` with `events` events, as the route read it. */
const statusOf = (state: RunState, events: number): RunStatus => ({
  id: 'r1',
  state,
  prompt: 'p',
  createdAt: new Date(0).toISOString(),
  events,
});

describe('toMessageEvents', () => {
  it('makes each event a message whose id is its index, then ends with `end` whose id is the event count', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<IndexedEvent>('-a-b--c-|', input);
      expectObservable(source.pipe(toMessageEvents())).toBe('-A-B--C-(E|)', {
        ...output,
        E: end('8', { state: 'completed' }),
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

  it('ends an empty run with `end` alone, whose id is its event count, 0', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<IndexedEvent>('---|').pipe(toMessageEvents())).toBe('---(E|)', {
        E: end('0', { state: 'completed' }),
      });
    });
  });

  it('counts on from `after`: a reconnect from the last event is sent `end` with the event count', () => {
    marbles().run(({ cold, expectObservable }) => {
      // The client has the run's 5 events (Last-Event-ID 4): `end` is 5, which the route answers 204.
      expectObservable(cold<IndexedEvent>('--|').pipe(toMessageEvents({ after: 4 }))).toBe('--(E|)', {
        E: end('5', { state: 'completed' }),
      });
      const rest = cold<IndexedEvent>('-c-|', input);
      expectObservable(rest.pipe(toMessageEvents({ after: 6 }))).toBe('-C-(E|)', {
        ...output,
        E: end('8', { state: 'completed' }),
      });
      const cancelled = cold<IndexedEvent>('-#', input, new CancelledError('the run was cancelled'));
      expectObservable(cancelled.pipe(toMessageEvents({ after: 2 }))).toBe('-(E|)', {
        E: end('3', { state: 'cancelled', error: { name: 'CancelledError', message: 'the run was cancelled' } }),
      });
    });
  });

  it('ends a run that ended with its error as `end` with its state, and completes', () => {
    const exit = new ExitError('EvoSci exited with code 2', { exitCode: 2, stderrTail: 'Traceback\nboom' });
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failed = cold<IndexedEvent>('-a-b-#', input, exit);
      expectObservable(failed.pipe(toMessageEvents())).toBe('-A-B-(E|)', {
        ...output,
        E: end('2', {
          state: 'failed',
          error: { name: 'ExitError', message: 'EvoSci exited with code 2', exitCode: 2 },
        }),
      });
      expectSubscriptions(failed.subscriptions).toBe('^----!');
      const cancelled = cold<IndexedEvent>('-a-#', input, new CancelledError('the run was cancelled'));
      expectObservable(cancelled.pipe(toMessageEvents())).toBe('-A-(E|)', {
        ...output,
        E: end('1', { state: 'cancelled', error: { name: 'CancelledError', message: 'the run was cancelled' } }),
      });
      const interrupted = cold<IndexedEvent>(
        '#',
        input,
        new RunInterruptedError('the hub stopped', { threadId: 't1' }),
      );
      expectObservable(interrupted.pipe(toMessageEvents())).toBe('(E|)', {
        E: end('0', {
          state: 'interrupted',
          error: { name: 'RunInterruptedError', message: 'the hub stopped', threadId: 't1' },
        }),
      });
      const other = cold<IndexedEvent>('-#', input, new EvoSciError('TimeoutError: took too long'));
      expectObservable(other.pipe(toMessageEvents())).toBe('-(E|)', {
        E: end('0', { state: 'failed', error: { name: 'EvoSciError', message: 'TimeoutError: took too long' } }),
      });
    });
  });

  it("turns a hub's refusal into `error` with its name and first line, any other error with its class alone, and completes", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const unknown = cold<IndexedEvent>('#', input, new UnknownRunError('nope'));
      expectObservable(unknown.pipe(toMessageEvents())).toBe('(X|)', {
        X: error('\0', 'UnknownRunError', 'no run "nope"'),
      });
      const broker = cold<IndexedEvent>('-a--#', input, new Error("EISDIR: illegal operation, read '/srv/runs/a'"));
      expectObservable(broker.pipe(toMessageEvents())).toBe('-A--(X|)', {
        ...output,
        X: error('0', 'Error', WITHHELD),
      });
      expectSubscriptions(broker.subscriptions).toBe('^---!');
      const thrown = cold<IndexedEvent>('-#', input, 'not an Error');
      expectObservable(thrown.pipe(toMessageEvents())).toBe('-(X|)', { X: error('\0', 'Error', WITHHELD) });
      const { proxy, revoke } = Proxy.revocable(new Error('gone'), {});
      revoke();
      const unreadable = cold<IndexedEvent>('-#', input, proxy);
      expectObservable(unreadable.pipe(toMessageEvents())).toBe('-(X|)', { X: error('\0', 'Error', WITHHELD) });
    });
  });

  it('gives `error` the last id the client has, from `after` too, so that a reconnect resumes there', () => {
    marbles().run(({ cold, expectObservable }) => {
      const lost = new Error('connection lost');
      const running = statusOf('running', 2);
      expectObservable(cold<IndexedEvent>('-#', input, lost).pipe(toMessageEvents({ after: 3 }))).toBe('-(X|)', {
        X: error('3', 'Error', WITHHELD),
      });
      const afterB = cold<IndexedEvent>('-b-#', input, lost).pipe(toMessageEvents({ after: 0, status: running }));
      expectObservable(afterB).toBe('-B-(X|)', { ...output, X: error('1', 'Error', WITHHELD) });
    });
  });

  it("gives `error` the event count once the client has every event of a run that had ended, as `end`'s", () => {
    marbles().run(({ cold, expectObservable }) => {
      const forgotten = new Error('forgotten');
      const ended = statusOf('completed', 2);
      // All of its events: a reconnect with 2 is answered 204.
      const all = cold<IndexedEvent>('-a-b-#', input, forgotten).pipe(toMessageEvents({ status: ended }));
      expectObservable(all).toBe('-A-B-(X|)', { ...output, X: error('2', 'Error', WITHHELD) });
      const caughtUp = cold<IndexedEvent>('-#', input, forgotten).pipe(toMessageEvents({ after: 1, status: ended }));
      expectObservable(caughtUp).toBe('-(X|)', { X: error('2', 'Error', WITHHELD) });
      // Not all: a reconnect resumes after the last it has.
      const some = cold<IndexedEvent>('-a-#', input, forgotten).pipe(toMessageEvents({ status: ended }));
      expectObservable(some).toBe('-A-(X|)', { ...output, X: error('0', 'Error', WITHHELD) });
      const none = cold<IndexedEvent>('#', input, forgotten).pipe(toMessageEvents({ status: ended }));
      expectObservable(none).toBe('(X|)', { X: error('\0', 'Error', WITHHELD) });
      const emptyRun = cold<IndexedEvent>('#', input, forgotten).pipe(
        toMessageEvents({ status: statusOf('failed', 0) }),
      );
      expectObservable(emptyRun).toBe('(X|)', { X: error('0', 'Error', WITHHELD) });
    });
  });

  it('does not read an error of `undefined` as a completed run', () => {
    const messages: MessageEvent[] = [];
    throwError(() => undefined)
      .pipe(toMessageEvents())
      .subscribe((message) => messages.push(message));
    expect(messages).toEqual([error('\0', 'Error', WITHHELD)]);
  });

  it('unsubscribes from the run when unsubscribed early, and sends nothing more', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<IndexedEvent>('-a-b-c-|', input);
      expectObservable(source.pipe(toMessageEvents()), '^--!').toBe('-A--', output);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('keeps the last id per subscriber: a late one counts from what it was sent', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<IndexedEvent>('-a-b-|', input);
      const messages$ = source.pipe(toMessageEvents());
      expectObservable(messages$).toBe('-A-B-(E|)', { ...output, E: end('2', { state: 'completed' }) });
      expectObservable(messages$, '--^').toBe('---B-(E|)', { ...output, E: end('2', { state: 'completed' }) });
      expectObservable(messages$, '----^').toBe('-----(E|)', { E: end('0', { state: 'completed' }) });
      expectSubscriptions(source.subscriptions).toBe(['^----!', '--^--!', '----^!']);
    });
  });

  it('gives what a Nest @Sse() handler returns', () => {
    expectTypeOf<Observable<MessageEvent>>().toExtend<Observable<NestMessageEvent>>();
  });
});

describe('hasSeenEnd', () => {
  it('is true for a reconnect at or past the event count of a run that ended: the id of its `end`', () => {
    for (const state of ['completed', 'failed', 'cancelled', 'interrupted'] as const) {
      expect(hasSeenEnd(statusOf(state, 5), 5)).toBe(true);
      expect(hasSeenEnd(statusOf(state, 5), 9)).toBe(true);
      expect(hasSeenEnd(statusOf(state, 0), 0)).toBe(true);
    }
  });

  it('is false before the end, for a run that goes on, and for a reader with no Last-Event-ID', () => {
    expect(hasSeenEnd(statusOf('completed', 5), 4)).toBe(false);
    expect(hasSeenEnd(statusOf('completed', 5), undefined)).toBe(false);
    expect(hasSeenEnd(statusOf('completed', 0), undefined)).toBe(false);
    expect(hasSeenEnd(statusOf('running', 5), 5)).toBe(false);
    expect(hasSeenEnd(statusOf('queued', 0), 0)).toBe(false);
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
