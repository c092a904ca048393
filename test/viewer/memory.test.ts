// The live view's model is bounded by what a frame can show plus counters:
// tool results are kept as short previews, never whole, and old entries are
// forgotten, so that a run of any length and any output size costs the view
// the same memory. Measured on the heap after a full collection.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { viewActions } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { PREVIEW_CHARS, VIEW_LIMITS, ViewModel } from '../../viewer/model.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const RESULTS = 3_000;
const RESULT_BYTES = 100 * 1024;
const MB = 1 << 20;

/** A fresh, flat string of `RESULT_BYTES` for each result, as each line of a transcript decodes to its own. */
function bigResult(i: number): string {
  return JSON.parse(JSON.stringify(`${i} ${'r'.repeat(RESULT_BYTES)}`)) as string;
}

/** A run whose main agent and one sub-agent each return large results: 300 MB of tool output in all. */
function* bigRun(): Generator<EvoEvent> {
  yield ev.toolCall('task', { subagent_type: 'code-agent', description: 'read everything' }, { id: 'k' });
  yield ev.subagentStart('code-agent', { instanceId: 'task:k', toolCallId: 'k' });
  for (let i = 0; i < RESULTS; i++) {
    const sub = i % 2 === 1;
    const id = `c${i}`;
    yield sub
      ? ev.subagentToolCall('code-agent', 'read_file', { path: `/data/${i}` }, { id, instanceId: 'task:k' })
      : ev.toolCall('read_file', { path: `/data/${i}` }, { id });
    yield sub
      ? ev.subagentToolResult('code-agent', 'read_file', bigResult(i), { id, instanceId: 'task:k' })
      : ev.toolResult('read_file', bigResult(i), { id });
    if (i % 500 === 0) yield ev.error(bigResult(i));
  }
  yield ev.subagentEnd('code-agent', { instanceId: 'task:k' });
  yield ev.toolResult('task', 'done', { id: 'k' });
  yield ev.done('read');
}

describe('the view model of a run with many large results (issue 19, item 9)', () => {
  it('keeps previews and counters: its heap does not grow with the output', async () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const view = new ViewModel();
    await new Promise<void>((resolve, reject) =>
      from(bigRun())
        .pipe(viewActions())
        .subscribe({ next: (a) => view.apply(a), error: reject, complete: resolve }),
    );
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // 300 MB of results went through; the model holds a few hundred previews.
    expect(grown / MB).toBeLessThan(32);

    expect(view.tools.size).toBe(RESULTS / 2);
    expect(view.tools.kept().length).toBe(VIEW_LIMITS.tools);
    const [delegation] = view.delegations;
    expect(delegation?.tools.size).toBe(RESULTS / 2);
    expect(delegation?.tools.kept().length).toBe(VIEW_LIMITS.delegationTools);
    expect(view.errorCount).toBe(RESULTS / 500);
    for (const text of [...view.errors, ...view.tools.kept().map((t) => t.detail)]) {
      expect(text.length).toBeLessThanOrEqual(PREVIEW_CHARS);
    }
    expect(view.summary?.invocations).toHaveLength(RESULTS + 1);
  }, 60_000);
});
