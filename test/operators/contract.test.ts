import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  Subject,
  from,
  lastValueFrom,
  map,
  mergeMap,
  take,
  toArray,
  type Observable,
  type OperatorFunction,
} from 'rxjs';
import {
  isKnownEvent,
  type ErrorEvent,
  type EvoEvent,
  type UnknownEvent,
  fromJsonl,
  ofType,
  toJsonl,
  unknownEvent,
} from '../../index.js';
import { accumulateText, groupSubagents, pairToolCalls, summarize, sumUsage } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const boom = new Error('getter threw');
/** A well-typed event whose `args` throws when read: an operator's own code fails on it. */
function throwingCall(name: string): EvoEvent {
  const call = { type: 'tool_call', name, id: 'c1' } as Record<string, unknown>;
  Object.defineProperty(call, 'args', {
    enumerable: true,
    get: () => {
      throw boom;
    },
  });
  return call as unknown as EvoEvent;
}

describe.each<[string, OperatorFunction<EvoEvent | UnknownEvent, unknown>, string]>([
  ['pairToolCalls', pairToolCalls(), 'read_file'],
  ['groupSubagents', groupSubagents(), 'task'],
  ['summarize', summarize(), 'read_file'],
])('%s keeps the RxJS contract', (_name, operator, tool) => {
  it('errors its subscriber with what its own code threw, and unsubscribes from the source', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-t-a-|', { t: ev.text('hi'), a: throwingCall(tool) });
      expectObservable(source.pipe(operator)).toBe('---#', undefined, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});

describe('groupSubagents keeps the source while a group is listened to, as groupBy does', () => {
  it('take(1) then mergeMap to the events of the first delegation completes at its end', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        s: ev.subagentStart('a'),
        x: ev.subagentText('a', 'one'),
        y: ev.subagentText('a', 'two'),
        e: ev.subagentEnd('a'),
      };
      const source = cold<EvoEvent>('-s-x-y-e---|', values);
      const firstEvents$ = source.pipe(
        groupSubagents(),
        take(1),
        mergeMap((run) => run.events$),
      );
      expectObservable(firstEvents$).toBe('---x-y-|', values);
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('lets the source go once neither the outer subscriber nor any events$ listens', () => {
    const source = new Subject<EvoEvent>();
    const inner = source.pipe(groupSubagents(), take(1)).subscribe((run) => {
      const listening = run.events$.subscribe();
      listening.unsubscribe();
    });
    source.next(ev.subagentStart('a'));
    expect(inner.closed).toBe(true);
    expect(source.observed).toBe(false);
  });
});

describe('kept unknown events and narrowing', () => {
  it('with keepUnknown, comparing `type` with a known literal narrows as it does without', async () => {
    const lines = '{"type": "heartbeat", "n": 1}\n{"type": "error", "message": "x"}\n';
    const events = await new Promise<(EvoEvent | UnknownEvent)[]>((resolve) => {
      const all: (EvoEvent | UnknownEvent)[] = [];
      fromJsonl(lines, { keepUnknown: true }).subscribe({ next: (e) => all.push(e), complete: () => resolve(all) });
    });
    const messages: string[] = [];
    const kept: string[] = [];
    for (const e of events) {
      // Checked by tsc under `strict` (the test project): `e.message` compiles only if `e` narrowed to ErrorEvent.
      if (e.type === 'error') {
        expectTypeOf(e).toEqualTypeOf<ErrorEvent>();
        messages.push(e.message);
      }
      if (e.type === 'unknown') kept.push(`${e.wireType}:${String(e.event['n'])}`);
    }
    expect(events.map((e) => e.type)).toEqual(['unknown', 'error']);
    expect(messages).toEqual(['x']);
    expect(kept).toEqual(['heartbeat:1']);
    expect(events.filter(isKnownEvent).map((e) => e.type)).toEqual(['error']);
    const errors$ = from(events).pipe(
      ofType('error'),
      map((e) => e.message),
    );
    expectTypeOf(errors$).toEqualTypeOf<Observable<string>>();
  });

  it('toJsonl writes a kept unknown event back as it came', async () => {
    const line = '{"type":"heartbeat","n":1,"nested":{"type":"x","list":[1,"a",null]}}\n';
    const [event] = await lastValueFrom(fromJsonl(line, { keepUnknown: true }).pipe(toArray()));
    expect(event?.type).toBe('unknown');
    expect(toJsonl(event!)).toBe(line);
  });

  it('operators ignore unknown events whatever fields they carry', async () => {
    const odd = unknownEvent({ type: 'tool_call_v2', name: 'x', args: 'not an object', content: 5 });
    const sources = () => from<(EvoEvent | UnknownEvent)[]>([odd, ev.text('a'), ev.usage(1, 2)]);
    const collect = <T>(op: OperatorFunction<EvoEvent | UnknownEvent, T>) =>
      new Promise<T[]>((resolve, reject) => {
        const out: T[] = [];
        sources()
          .pipe(op)
          .subscribe({ next: (v) => out.push(v), error: reject, complete: () => resolve(out) });
      });
    expect(await collect(pairToolCalls())).toEqual([]);
    expect(await collect(accumulateText())).toEqual(['a']);
    expect(await collect(sumUsage())).toEqual([{ inputTokens: 1, outputTokens: 2, totalTokens: 3 }]);
    const [summary] = await collect(summarize());
    expect(summary?.counts).toEqual({ tool_call_v2: 1, text: 1, usage_stats: 1 });
    expect(summary?.invocations).toEqual([]);
  });
});
