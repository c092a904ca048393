// A traced run() carries its own prompt and thread: `traceRun()` right after it is not told them again.
import { lastValueFrom, map, of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { run, type EvoEvent, type RunOptions } from '../../index.js';
import { summarize } from '../../operators/index.js';
import { traceRun, type TraceRunOptions } from '../../otel/index.js';
import { runOptionsOf } from '../../src/process/runOptionsOf.js';
import { fakeEvoSci } from '../../testing/index.js';
import { memoryTracing, SpanTree } from './support.js';

const done = JSON.stringify({ type: 'done', content: 'ok', response: 'ok' });
const fake = () => fakeEvoSci([{ lines: [done] }]);

/** The run span's conversation id and recorded prompt, for `events$` piped as `pipe` says. */
async function rootOf(
  events$: Observable<EvoEvent>,
  options: TraceRunOptions,
  pipe: (traced: Observable<EvoEvent>) => Observable<unknown> = (traced) => traced,
): Promise<[unknown, unknown]> {
  const { provider, spans } = memoryTracing();
  await lastValueFrom(pipe(events$.pipe(traceRun({ tracerProvider: provider, ...options }))));
  const { attributes } = new SpanTree(spans()).roots()[0]!;
  const input = attributes['gen_ai.input.messages'];
  const prompt = input === undefined ? undefined : (JSON.parse(input as string) as [{ parts: [{ content: string }] }]);
  return [attributes['gen_ai.conversation.id'], prompt?.[0].parts[0].content];
}

describe('traceRun() right after run()', () => {
  const options: RunOptions = { prompt: 'Survey sparse attention', resume: 'thread-42' };

  it("records the run's prompt and resumed thread, followed by summarize() or not", async () => {
    for (const pipe of [undefined, (traced: Observable<EvoEvent>) => traced.pipe(summarize())])
      expect(await rootOf(run({ ...options, ...fake() }), { captureContent: true }, pipe)).toEqual([
        'thread-42',
        'Survey sparse attention',
      ]);
  });

  it('keeps the prompt out with content capture off, the thread in', async () => {
    expect(await rootOf(run({ ...options, ...fake() }), {})).toEqual(['thread-42', undefined]);
  });

  it("takes the options given to it over the run's", async () => {
    const given = { captureContent: true, prompt: 'mine', conversationId: 'other' };
    expect(await rootOf(run({ ...options, ...fake() }), given)).toEqual(['other', 'mine']);
  });

  it('knows nothing of a run behind another operator, nor of any other source', async () => {
    const run$ = run({ ...options, ...fake() });
    expect(await rootOf(run$.pipe(map((e) => e)), { captureContent: true })).toEqual([undefined, undefined]);
    expect(runOptionsOf(of({ type: 'done', content: '', response: '' }))).toBeUndefined();
  });

  it('carries a copy of the prompt and thread only: no env, no later change', () => {
    const mutable = { prompt: 'a', resume: 't', env: { API_KEY: 'secret' } };
    const run$ = run(mutable);
    mutable.prompt = 'b';
    expect(runOptionsOf(run$)).toEqual({ prompt: 'a', resume: 't' });
    expect(runOptionsOf(run({ prompt: 'p' }))).toEqual({ prompt: 'p' });
  });
});
