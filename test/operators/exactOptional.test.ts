// Operators leave a field they have no value for out of what they emit, rather than set it to `undefined`:
// a user's `deepStrictEqual` against the object they write then holds, with no `undefined`s spelled out.
import { deepStrictEqual } from 'node:assert';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { from, isObservable, lastValueFrom, merge, mergeMap, of, toArray, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { fromJsonlFile, type EvoEvent, type UnknownEvent } from '../../index.js';
import {
  accumulateText,
  groupSubagents,
  ofType,
  pairToolCalls,
  summarize,
  sumUsage,
  viewActions,
  type ToolInvocation,
} from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const exec = promisify(execFile);

/** Paths of every own enumerable property, at any depth, whose value is `undefined`; Observables are not entered. */
function undefinedKeys(value: unknown, path = '$', seen = new Set<object>()): string[] {
  if (typeof value !== 'object' || value === null || isObservable(value) || seen.has(value)) return [];
  seen.add(value);
  return Object.keys(value).flatMap((key) => {
    const child = (value as Record<string, unknown>)[key];
    return child === undefined ? [`${path}.${key}`] : undefinedKeys(child, `${path}.${key}`, seen);
  });
}

type Events = EvoEvent | UnknownEvent;

/** Every operator, each ending in an Observable of what it emits; a delegation's events are read too. */
const operators: Record<string, OperatorFunction<Events, unknown>> = {
  ofType: ofType('tool_call', 'subagent_start', 'done'),
  pairToolCalls: pairToolCalls(),
  groupSubagents: (events$) =>
    events$.pipe(
      groupSubagents(),
      mergeMap((run) => merge(of(run), run.events$)),
    ),
  accumulateText: accumulateText(),
  sumUsage: sumUsage(),
  summarize: summarize(),
  viewActions: viewActions(),
};

/** Every recorded transcript: the fixtures, the examples', the shipped ones. */
const transcripts = ['test/fixtures', 'examples/transcripts', 'testing/runs'].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((file) => file.endsWith('.jsonl'))
    .map((file) => `${dir}/${file}`),
);

describe('operator output has no key set to undefined', () => {
  it('type-checks operators/ and testing/ with exactOptionalPropertyTypes', async () => {
    const tsc = join(root, 'node_modules/.bin/tsc');
    const result = await exec(tsc, ['-p', join(root, 'tsconfig.exact.json')], { cwd: root }).catch(
      (err: { stdout: string }) => err,
    );
    expect(result.stdout).toBe('');
  }, 120_000);

  it('reads every recorded transcript', () => expect(transcripts.length).toBeGreaterThanOrEqual(18));

  it.each(transcripts)('on %s, for every operator', async (transcript) => {
    const found: Record<string, string[]> = {};
    for (const [name, operator] of Object.entries(operators)) {
      const output = await lastValueFrom(fromJsonlFile(join(root, transcript)).pipe(operator, toArray()));
      const keys = output.flatMap((value, i) => undefinedKeys(value, `[${i}]`));
      if (keys.length > 0) found[name] = keys.slice(0, 5);
    }
    expect(found).toEqual({});
  });

  it("a pairToolCalls snapshot deepStrictEquals the object a test writes, main agent's and sub-agent's", () => {
    const c = ev.toolCall('read_file', { path: 'a.md' }, { id: 'c1' });
    const r = ev.toolResult('read_file', '# A', { id: 'c1' });
    const s = ev.subagentToolCall('research-agent', 'search', { q: 'x' }, { id: 'c1', instanceId: 'task:t1' });
    const main = { key: '[null,null,"c1"]', id: 'c1', name: 'read_file', args: { path: 'a.md' } };
    const sub = {
      key: '["task:t1","research-agent","c1"]',
      id: 'c1',
      name: 'search',
      args: { q: 'x' },
      subagent: 'research-agent',
      instanceId: 'task:t1',
    };
    const scheduler = new TestScheduler((actual, expected) => deepStrictEqual(actual, expected));
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-s-r-|', { c, s, r });
      expectObservable(source.pipe(pairToolCalls({ scheduler }))).toBe('-a-b-c-(d|)', {
        a: { ...main, status: 'running', callEvent: c, startedAt: 1 } satisfies ToolInvocation,
        b: { ...sub, status: 'running', callEvent: s, startedAt: 3 } satisfies ToolInvocation,
        c: {
          ...main,
          status: 'succeeded',
          callEvent: c,
          startedAt: 1,
          result: '# A',
          success: true,
          resultEvent: r,
          endedAt: 5,
        } satisfies ToolInvocation,
        d: { ...sub, status: 'unfinished', callEvent: s, startedAt: 3, endedAt: 7 } satisfies ToolInvocation,
      });
    });
  });

  it('a summary without done has no response key, and its parts none of the ids the stream lacked', async () => {
    const summary = await lastValueFrom(
      from([
        ev.toolCall('task', { subagent_type: 'research-agent' }, { id: 't1' }),
        ev.subagentStart('research-agent'),
        ev.subagentToolCall('research-agent', 'search', {}, { id: 's1' }),
        ev.toolResult('execute', 'Traceback', { id: 'x1', success: false }),
      ]).pipe(summarize()),
    );
    expect(Object.keys(summary)).not.toContain('response');
    deepStrictEqual(summary.delegations, [
      {
        key: 't1',
        name: 'research-agent',
        subagentType: 'research-agent',
        description: '',
        taskCallId: 't1',
        events: 1,
        ended: false,
      },
    ]);
    const [task, search, execute] = summary.invocations;
    expect(Object.keys(task!)).toEqual(['key', 'id', 'name', 'args', 'status', 'startedAt', 'endedAt']);
    expect(Object.keys(search!)).toEqual(['key', 'id', 'name', 'args', 'subagent', 'status', 'startedAt', 'endedAt']);
    expect(execute).toMatchObject({ status: 'failed', error: 'Traceback' });
  });

  it('a SubagentRun lists only the fields its stream gave, and reads a type told after its start', async () => {
    const runs = await lastValueFrom(
      from([
        // A start naming a task call this stream did not show (made before a resume), then that call sent again.
        ev.subagentStart('research-agent', { instanceId: 'task:t1', toolCallId: 't1' }),
        ev.toolCall('task', { subagent_type: 'research-agent', description: 'find' }, { id: 't1' }),
        ev.subagentStart('coder'),
      ]).pipe(groupSubagents(), toArray()),
    );
    const [resumed, legacy] = runs;
    expect(Object.keys(resumed!)).toEqual([
      'key',
      'instanceId',
      'name',
      'description',
      'ended',
      'taskCallId',
      'events$',
    ]);
    expect(resumed!.subagentType).toBe('research-agent');
    expect(Object.keys(legacy!)).toEqual(['key', 'name', 'description', 'ended', 'events$']);
  });
});
