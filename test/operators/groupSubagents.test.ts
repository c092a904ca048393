import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, map, mergeMap, Subject, toArray, type Observable } from 'rxjs';
import type { EvoEvent } from '../../index.js';
import { groupSubagents, type SubagentEvent, type SubagentRun } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const task = (id: string, subagentType?: string) =>
  ev.toolCall('task', subagentType ? { subagent_type: subagentType, description: `do ${id}` } : {}, { id });
const taskDone = (id?: string) => ev.toolResult('task', 'finished', { id });

/** Each delegation's name at the end and the events it received. */
async function delegations(events: EvoEvent[]): Promise<{ key: string; name: string; events: SubagentEvent[] }[]> {
  const runs: SubagentRun[] = [];
  const grouped = await lastValueFrom(
    from(events).pipe(
      groupSubagents(),
      mergeMap((run) => {
        runs.push(run);
        return run.events$.pipe(
          toArray(),
          map((received) => ({ run, received })),
        );
      }),
      toArray(),
    ),
  );
  return runs.map((run) => ({ key: run.key, name: run.name, events: grouped.find((g) => g.run === run)!.received }));
}

describe('groupSubagents', () => {
  it('emits a run at its start and routes its events to events$, which completes at subagent_end', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        k: task('t1', 'research-agent'),
        s: ev.subagentStart('research-agent', { description: 'find papers' }),
        c: ev.subagentToolCall('research-agent', 'search', { q: 'x' }, { id: 's1' }),
        r: ev.subagentToolResult('research-agent', 'search', 'hits', { id: 's1' }),
        x: ev.subagentText('research-agent', 'found 3'),
        d: taskDone('t1'),
        e: ev.subagentEnd('research-agent'),
        t: ev.text('main'),
      };
      const source = cold<EvoEvent>('-k-s-c-t-r-x-d-e-t-|', values);
      const runs = source.pipe(groupSubagents());
      const outer: Observable<string> = runs.pipe(
        map((run) => `${run.key}:${run.name}:${run.description}:${run.taskCallId}`),
      );
      expectObservable(outer).toBe('---a---------------|', { a: 't1:research-agent:find papers:t1' });
      expectObservable(runs.pipe(mergeMap((run) => run.events$))).toBe('-----c---r-x-------|', values);
      expectObservable(runs.pipe(mergeMap((run) => run.events$.pipe(toArray())))).toBe('---------------(a)-|', {
        a: [values.c, values.r, values.x],
      });
      expectSubscriptions(source.subscriptions).toBe([
        '^------------------!',
        '^------------------!',
        '^------------------!',
      ]);
    });
  });

  it('completes empty on an empty source', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('--|').pipe(groupSubagents())).toBe('--|');
    });
  });

  it('completes the open delegations when the source completes', () => {
    marbles().run(({ cold, expectObservable }) => {
      const values = { s: ev.subagentStart('a'), x: ev.subagentText('a', 'hi') };
      const runs = cold<EvoEvent>('-s-x--|', values).pipe(groupSubagents());
      expectObservable(runs.pipe(mergeMap((run) => run.events$.pipe(toArray())))).toBe('------(a|)', { a: [values.x] });
    });
  });

  it('errors the outer Observable and the open events$ when the source errors, as groupBy does', () => {
    marbles().run(({ cold, expectObservable }) => {
      const values = { s: ev.subagentStart('a'), x: ev.subagentText('a', 'hi') };
      const runs = cold<EvoEvent>('-s-x--#', values, new Error('killed')).pipe(groupSubagents());
      expectObservable(runs.pipe(map((r) => r.name))).toBe('-a----#', { a: 'a' }, new Error('killed'));
      expectObservable(runs.pipe(mergeMap((run) => run.events$))).toBe('---x--#', values, new Error('killed'));
    });
  });

  it('unsubscribes from the source when unsubscribed early', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-s-x-s-|', { s: ev.subagentStart('a'), x: ev.subagentText('a', 'hi') });
      expectObservable(
        source.pipe(
          groupSubagents(),
          map((r) => r.name),
        ),
        '^--!',
      ).toBe('-a--', { a: 'a' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('renames a delegation on a second subagent_start for the same task call', async () => {
    const events: EvoEvent[] = [
      task('t1'),
      ev.subagentStart('sub-agent', { description: 'Outline a surv' }),
      task('t1', 'planner-agent'),
      ev.subagentStart('planner-agent', { description: 'Outline a survey of sparse attention' }),
      ev.subagentText('planner-agent', 'plan'),
      taskDone('t1'),
      ev.subagentEnd('planner-agent'),
    ];
    const runs = await delegations(events);
    expect(runs).toEqual([{ key: 't1', name: 'planner-agent', events: [events[4]] }]);
  });

  it('keeps parallel same-name delegations apart by task call, instance_id and call id', async () => {
    const events: EvoEvent[] = [
      task('t1', 'research-agent'),
      ev.subagentStart('research-agent', { description: 'dense retrievers' }),
      task('t2', 'research-agent'),
      ev.subagentStart('research-agent', { description: 'rerankers' }),
      ev.subagentToolCall('research-agent', 'search', {}, { id: 'a1' }),
      ev.subagentText('research-agent', 'dense…', { instanceId: 'i-1' }),
      ev.subagentText('research-agent', 'rerank…', { instanceId: 'i-2' }),
      ev.subagentToolCall('research-agent', 'search', { q: 'dense' }, { id: 'a1' }),
      ev.subagentToolResult('research-agent', 'search', 'hits', { id: 'a1' }),
      ev.subagentText('research-agent', 'more rerank', { instanceId: 'i-2' }),
      taskDone('t2'),
      ev.subagentEnd('research-agent'),
      ev.subagentText('research-agent', 'last dense', { instanceId: 'i-1' }),
      taskDone('t1'),
      ev.subagentEnd('research-agent'),
    ];
    const runs = await delegations(events);
    expect(runs.map((r) => [r.key, r.name, r.events.map((e) => events.indexOf(e))])).toEqual([
      ['t1', 'research-agent', [4, 5, 7, 8, 12]],
      ['t2', 'research-agent', [6, 9]],
    ]);
  });

  it('does not let a re-sent finished task call start the next delegation of its type', async () => {
    const events: EvoEvent[] = [
      task('t1', 'research-agent'),
      ev.subagentStart('research-agent', { description: 'first' }),
      ev.subagentText('research-agent', 'one'),
      task('t1', 'research-agent'),
      taskDone('t1'),
      ev.subagentEnd('research-agent'),
      // Before each later result the producer re-sends every call so far, t1 included.
      task('t1', 'research-agent'),
      task('t3', 'research-agent'),
      ev.subagentStart('research-agent', { description: 'second' }),
      ev.subagentText('research-agent', 'two'),
      task('t1', 'research-agent'),
      task('t3', 'research-agent'),
      taskDone('t3'),
      ev.subagentEnd('research-agent'),
    ];
    const runs = await delegations(events);
    expect(runs.map((r) => [r.key, r.events.map((e) => (e as { content: string }).content)])).toEqual([
      ['t1', ['one']],
      ['t3', ['two']],
    ]);
  });

  it('lets a task that failed before starting a sub-agent end nothing and start nothing', async () => {
    const events: EvoEvent[] = [
      task('t1', 'a-agent'),
      ev.subagentStart('a-agent', { description: 'first' }),
      task('t9', 'b-agent'),
      ev.toolResult('task', 'invalid subagent_type', { id: 't9', success: false }),
      task('t2', 'b-agent'),
      ev.subagentStart('b-agent', { description: 'second' }),
      taskDone('t2'),
      ev.subagentEnd('b-agent'),
      ev.subagentText('a-agent', 'still running'),
      taskDone('t1'),
      ev.subagentEnd('a-agent'),
    ];
    const runs = await delegations(events);
    expect(runs.map((r) => [r.key, r.name, r.events.length])).toEqual([
      ['t1', 'a-agent', 1],
      ['t2', 'b-agent', 0],
    ]);
  });

  it('lets an id-less failed task (older producers) start nothing either', async () => {
    const events: EvoEvent[] = [
      task('t1', 'research-agent'),
      ev.toolResult('task', 'invalid arguments', { success: false }),
      task('t2'),
      ev.subagentStart('sub-agent', { description: 'Surv' }),
      task('t2', 'research-agent'),
      ev.subagentStart('research-agent', { description: 'Survey' }),
      ev.subagentText('research-agent', 'found'),
      ev.toolResult('task', 'done'),
      ev.subagentEnd('research-agent'),
    ];
    const runs = await delegations(events);
    expect(runs.map((r) => [r.key, r.name, r.events.length])).toEqual([['t2', 'research-agent', 1]]);
  });

  it('never drops an event: one with no delegation of its name (nor a placeholder one) starts one of its own', async () => {
    const events: EvoEvent[] = [
      ev.subagentText('stray-agent', 'hello'),
      ev.subagentEnd('stray-agent'),
      ev.subagentEnd('nobody'),
    ];
    const runs = await delegations(events);
    expect(runs).toEqual([{ key: 'subagent#1', name: 'stray-agent', events: [events[0]] }]);
  });

  it('keeps no state between subscriptions', async () => {
    const source = new Subject<EvoEvent>();
    const grouped = source.pipe(
      groupSubagents(),
      map((r) => r.key),
    );
    const first = lastValueFrom(grouped.pipe(toArray()));
    source.next(task('t1', 'a'));
    source.next(ev.subagentStart('a'));
    source.complete();
    expect(await first).toEqual(['t1']);
    expect(await lastValueFrom(grouped.pipe(toArray()))).toEqual([]);
  });
});

describe('groupSubagents on 0.2.x streams: delegations by instance', () => {
  const task = (id: string, description: string) =>
    ev.toolCall('task', { description, subagent_type: 'research-agent' }, { id });
  const start = (instance: string, taskId: string) =>
    ev.subagentStart('research-agent', { instanceId: instance, toolCallId: taskId });
  const call = (instance: string, q: string) =>
    ev.subagentToolCall('research-agent', 'web_search', { q }, { id: 'call_0', instanceId: instance });
  const result = (instance: string, hits: string) =>
    ev.subagentToolResult('research-agent', 'web_search', hits, { id: 'call_0', instanceId: instance });
  const text = (instance: string, content: string) =>
    ev.subagentText('research-agent', content, { instanceId: instance });
  const end = (instance: string) => ev.subagentEnd('research-agent', { instanceId: instance });

  it('gives two same-name sub-agents their own interleaved events, whatever the end and result order', async () => {
    const stream: EvoEvent[] = [
      task('t1', 'Survey fixed-pattern sparsity'),
      task('t2', 'Survey learned sparsity'),
      start('task:t1', 't1'),
      start('task:t2', 't2'),
      call('task:t2', 'routing attention'),
      call('task:t1', 'longformer'),
      result('task:t1', 'longformer hits'),
      text('task:t2', 'reading'),
      result('task:t2', 'routing hits'),
      text('task:t1', 'done'),
      // t1: its end before its task's result; t2: after.
      end('task:t1'),
      ev.toolResult('task', 'fixed: 3 papers', { id: 't1' }),
      ev.toolResult('task', 'learned: 2 papers', { id: 't2' }),
      text('task:t2', 'late words'),
      end('task:t2'),
    ];
    const got = await delegations(stream);
    expect(got.map((d) => d.key)).toEqual(['task:t1', 'task:t2']);
    expect(
      got[0]!.events.map((e) => (e.type === 'subagent_text' ? e.content : 'args' in e ? e.args['q'] : e.content)),
    ).toEqual(['longformer', 'longformer hits', 'done']);
    expect(got[1]!.events).toHaveLength(4);
    expect(got[1]!.events.every((e) => e.instance_id === 'task:t2')).toBe(true);
  });

  it('takes subagentType and description from the task call the start names', () => {
    marbles().run(({ cold, expectObservable }) => {
      const values = { k: task('t1', 'Survey learned sparsity'), s: start('task:t1', 't1'), e: end('task:t1') };
      const runs = cold<EvoEvent>('-k-s-e-|', values).pipe(groupSubagents());
      expectObservable(
        runs.pipe(map((r) => [r.key, r.instanceId, r.taskCallId, r.subagentType, r.description].join('|'))),
      ).toBe('---a---|', { a: 'task:t1|task:t1|t1|research-agent|Survey learned sparsity' });
      expectObservable(runs.pipe(mergeMap((r) => r.events$))).toBe('-------|');
    });
  });

  it('starts a delegation of its own for events of an instance it never saw start, and drops nothing', async () => {
    const got = await delegations([text('task:x', 'orphan'), end('task:x')]);
    expect(got.map((d) => d.events.length)).toEqual([1]);
  });
});
