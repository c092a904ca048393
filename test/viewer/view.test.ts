import pc from 'picocolors';
import { lastValueFrom, scan, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, type EvoEvent } from '../../index.js';
import { initialView, reduceView, viewActions } from '../../viewer/model.js';
import { renderFrame } from '../../viewer/render.js';
import { fixtureBytes, fixtureTruth } from '../support/collect.js';
import { marbles } from '../support/marbles.js';
import { events as ev } from '../../testing/events.js';

const plain = pc.createColors(false);
const demo = 'examples/transcripts/demo-run.jsonl';

describe('viewActions', () => {
  it('subscribes to the run once, however many operators it combines', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-a-b-|', { a: ev.text('hi'), b: ev.usage(1, 2) });
      const kinds = source.pipe(
        viewActions(),
        scan((acc, a) => [...acc, a.kind], [] as string[]),
      );
      expectObservable(kinds).toBe('-a-b-(c|)', { a: ['text'], b: ['text', 'usage'], c: ['text', 'usage', 'summary'] });
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('builds a view state that agrees with the run', async () => {
    const truth = fixtureTruth<{ delegations: { name: string }[]; response: string; usage: object }>(demo);
    const state = await lastValueFrom(fromJsonl(fixtureBytes(demo)).pipe(viewActions(), scan(reduceView, initialView)));
    expect(state.delegations.map((d) => d.run.name)).toEqual(truth.delegations.map((d) => d.name));
    expect(state.delegations.every((d) => d.events !== undefined)).toBe(true);
    expect(state.text).toBe(truth.response);
    expect(state.usage).toEqual(truth.usage);
    expect([...state.tools.values()].some((t) => t.name === 'task')).toBe(false);
  });
});

describe('renderFrame', () => {
  it('fits the terminal at every step of a run, and shows tools, sub-agents, text and tokens', async () => {
    const states = await lastValueFrom(
      fromJsonl(fixtureBytes(demo)).pipe(viewActions(), scan(reduceView, initialView), toArray()),
    );
    const size = { columns: 80, rows: 24 };
    for (const state of states) {
      const lines = renderFrame(state, plain, '⠋', size).split('\n');
      expect(lines.length).toBeLessThanOrEqual(size.rows);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(size.columns);
    }
    const last = renderFrame(states.at(-1)!, plain, '⠋', size);
    expect(last).toMatch(/✗ execute Traceback/);
    expect(last).toMatch(/✓ research-agent/);
    expect(last).toMatch(/tokens 69,015 {2}\(67,780 in · 1,235 out\)/);
    const running = states.find((s) => [...s.tools.values()].some((t) => t.status === 'running'))!;
    expect(renderFrame(running, plain, '⠋', size)).toMatch(/⠋ \w+/);
  });
});
