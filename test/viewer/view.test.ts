import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import pc from 'picocolors';
import { lastValueFrom, scan, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, type EvoEvent } from '../../index.js';
import { viewActions } from '../../operators/index.js';
import { ViewModel } from '../../viewer/model.js';
import { renderFrame } from '../../viewer/render.js';
import { liveView } from '../../viewer/liveView.js';
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
    const state = await lastValueFrom(
      fromJsonl(fixtureBytes(demo)).pipe(
        viewActions(),
        scan((view, action) => view.apply(action), new ViewModel()),
      ),
    );
    expect(state.delegations.map((d) => d.run.name)).toEqual(truth.delegations.map((d) => d.name));
    expect(state.delegations.every((d) => d.events !== undefined)).toBe(true);
    expect(state.text).toBe(truth.response);
    expect(state.usage).toEqual(truth.usage);
    expect(state.tools.kept().some((t) => t.name === 'task')).toBe(false);
  });
});

describe('renderFrame', () => {
  it('fits the terminal at every step of a run, and shows tools, sub-agents, text and tokens', async () => {
    const truth = fixtureTruth<{ usage: { inputTokens: number; outputTokens: number; totalTokens: number } }>(demo);
    const actions = await lastValueFrom(fromJsonl(fixtureBytes(demo)).pipe(viewActions(), toArray()));
    const size = { columns: 80, rows: 24 };
    const view = new ViewModel();
    let sawRunning = false;
    for (const action of actions) {
      const frame = renderFrame(view.apply(action), plain, '⠋', size);
      const lines = frame.split('\n');
      expect(lines.length).toBeLessThanOrEqual(size.rows);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(size.columns);
      if (view.tools.kept().some((t) => t.status === 'running')) sawRunning ||= /⠋ \w+/.test(frame);
    }
    expect(sawRunning).toBe(true);
    const last = renderFrame(view, plain, '⠋', size);
    expect(last).toMatch(/✗ execute /);
    expect(last).toMatch(/✓ research-agent/);
    expect(last).toMatch(/Panel/);
    const n = (x: number) => new Intl.NumberFormat('en-US').format(x);
    expect(last).toContain(
      `tokens ${n(truth.usage.totalTokens)}  (${n(truth.usage.inputTokens)} in · ${n(truth.usage.outputTokens)} out)`,
    );
  });
});

describe('the demo’s last frame', () => {
  it('shows each research-agent with its own searches', async () => {
    const truth = fixtureTruth<{
      delegations: { instanceId: string; name: string; description: string }[];
      invocations: { instanceId: string | null; name: string; args: { query?: string } }[];
    }>(demo);
    const view = await lastValueFrom(
      fromJsonl(fixtureBytes(demo)).pipe(
        viewActions(),
        scan((v, action) => v.apply(action), new ViewModel()),
      ),
    );
    const frame = renderFrame(view, plain, '⠋', { columns: 160, rows: 80 });
    const researchers = truth.delegations.filter((d) => d.name === 'research-agent');
    expect(researchers).toHaveLength(2);
    const blocks = frame.split(/\n(?= {2}\S+ research-agent )/);
    for (const researcher of researchers) {
      const own = truth.invocations.filter((i) => i.instanceId === researcher.instanceId).map((i) => i.args.query!);
      const others = truth.invocations
        .filter((i) => i.name === 'tavily_search' && i.instanceId !== researcher.instanceId)
        .map((i) => i.args.query!);
      const block = blocks.find((b) => b.includes(researcher.description))!;
      const shown = block.split('\n').slice(1, 4).join('\n');
      // The frame keeps the last three tools of each delegation.
      for (const query of own.slice(-2)) expect(shown).toContain(query.slice(0, 30));
      for (const query of others) expect(shown).not.toContain(query.slice(0, 30));
    }
  });
});

describe('a sub-agent stopped for approval', () => {
  const finalView = (name: string) =>
    lastValueFrom(
      fromJsonl(fixtureBytes(name)).pipe(
        viewActions(),
        scan((v, action) => v.apply(action), new ViewModel()),
      ),
    );

  it('shows its paused call, and the sub-agent itself, as awaiting input', async () => {
    const view = await finalView('subagent-approval.jsonl');
    const [delegation] = view.delegations;
    expect(delegation?.tools.kept().map((t) => [t.name, t.status])).toEqual([['execute', 'awaiting-input']]);
    const frame = renderFrame(view, plain, '⠋', { columns: 120, rows: 40 });
    expect(frame).toMatch(/^ {2}\? code-agent /m);
    expect(frame).toMatch(/^ {6}\? execute python sweep\.py/m);
    expect(view.summary?.outcome).toBe('needs-input');
  });

  it('shows both of two same-type sub-agents paused on the same call id as awaiting input', async () => {
    const view = await finalView('examples/transcripts/parallel-approvals.jsonl');
    expect(view.delegations.map((d) => d.tools.kept().map((t) => [t.key.includes('call_0'), t.status]))).toEqual([
      [[true, 'awaiting-input']],
      [[true, 'awaiting-input']],
    ]);
    const summary = view.summary!;
    expect(summary.invocations.map((i) => [i.name, i.status])).toEqual([
      ['task', 'awaiting-input'],
      ['task', 'awaiting-input'],
      ['execute', 'awaiting-input'],
      ['execute', 'awaiting-input'],
    ]);
  });

  it('prints, without a terminal, the paused call with a question mark and what resuming does', async () => {
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString()));
    await liveView(fromJsonl(fixtureBytes('subagent-approval.jsonl')), {
      output: output as unknown as NodeJS.WriteStream,
      interactive: false,
    });
    expect(text).toMatch(/code-agent › \? execute python sweep\.py/);
    expect(text).toMatch(/^\? code-agent Launch the learning-rate sweep \(\d+ events, awaiting input\)$/m);
    expect(text).toContain('Needs input');
    expect(text).toMatch(/approve execute \{"command":"python sweep\.py","lr":NaN,"budget":Infinity\}/);
    expect(text).toContain('sends its prompt as a new message; the paused call itself gets no answer');
    expect(text).not.toMatch(/to answer/i);
    expect(text).toMatch(/· 6,370 main-agent tokens \(6,200 in · 170 out\) ·/);
  });

  it('draws its frame on a terminal that reports no size (0 × 0), as one of the usual size', async () => {
    const output = Object.assign(new PassThrough(), { isTTY: true, columns: 0, rows: 0 });
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString()));
    await liveView(fromJsonl(fixtureBytes('subagent-approval.jsonl')), {
      output: output as unknown as NodeJS.WriteStream,
      interactive: true,
      timed: false,
    });
    const shown = stripVTControlCharacters(text);
    // The frame: its sections, and the sub-agent with the call it paused on (no plain lines are written on a TTY).
    expect(shown).toMatch(
      /^Tools\n {2}✓ configure_sweep .*\nSub-agents\n {2}\? code-agent Launch the learning-rate sweep/m,
    );
    expect(shown).toMatch(/^ {6}\? execute python sweep\.py/m);
    expect(shown).toContain('needs-input · 2 tool calls');
  });
});
