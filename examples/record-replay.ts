// Record a run to a JSONL file with timings, and replay it at its own pace.
//
//   npx tsx examples/record-replay.ts                        record the demo, then replay it 10x faster
//   npx tsx examples/record-replay.ts record FILE [--prompt TEXT] [--speed X]
//   npx tsx examples/record-replay.ts replay FILE [--speed X]
//
// `record` writes every event with `toJsonl`, each with an extra `elapsed_ms`
// field (ms since the run started). The decoder keeps fields it does not
// know, so `replay` reads them back with `fromJsonl` and re-emits each event
// at its recorded time (`concatMap` + `timer`), X times faster (`--speed 0`:
// no waiting), then prints the run's summary.
//
// Without EvoSci installed (or with EVOSCI_RX_FAKE=1) `record` replays
// examples/transcripts/demo-run.jsonl through the fake CLI, `--speed` times
// faster than live (default 4; 0: no pacing).
import { createReadStream, createWriteStream, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pc from 'picocolors';
import { concatMap, count, defer, finalize, lastValueFrom, map, type Observable, tap, timer } from 'rxjs';
import { type EvoEvent, fromJsonl, run, toJsonl } from 'evosci-rx';
import { countToolCalls, summarize, type RunSummary } from 'evosci-rx/operators';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

/** An event as recorded: the wire event plus the field this example adds. */
type Timed = EvoEvent & { readonly elapsed_ms: number };

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    prompt: { type: 'string', default: 'Survey recent sparse-attention work and write notes.md' },
    speed: { type: 'string' },
  },
});
const [mode, file] = positionals;
const speed = (fallback: number): number => {
  const n = Number(opts.speed ?? fallback);
  if (!(n >= 0)) usage(`--speed must be a number >= 0, not ${JSON.stringify(opts.speed)}`);
  return n;
};

try {
  if (mode === undefined) {
    const path = join(mkdtempSync(join(tmpdir(), 'evosci-record-')), 'run.jsonl');
    await record(path, opts.prompt, 4);
    console.log();
    await replay(path, 10);
  } else if (mode === 'record' && file) {
    await record(file, opts.prompt, speed(4));
  } else if (mode === 'replay' && file) {
    await replay(file, speed(1));
  } else {
    usage('usage: record-replay.ts [record FILE [--prompt TEXT] [--speed X] | replay FILE [--speed X]]');
  }
} catch (err) {
  console.error(pc.red(err instanceof Error ? err.message : String(err)));
  process.exitCode = 1;
}

async function record(path: string, prompt: string, fakeSpeed: number): Promise<void> {
  const pacing = fakeSpeed === 0 ? {} : livePacing(fakeSpeed);
  const { fake, ...cli } = evosciCommand([{ transcript: transcript('demo-run.jsonl'), ...pacing }]);
  console.log(
    `recording ${fake ? pc.dim(`(fake EvoSci at ${fakeSpeed === 0 ? 'full speed' : `${fakeSpeed}x`}) `) : ''}to ${path}`,
  );
  // Opened up front: a bad path fails before the run starts.
  const out = createWriteStream(path, { fd: openSync(path, 'w') });
  const closed = new Promise<void>((resolve, reject) => out.on('close', () => resolve()).on('error', reject));
  // `defer`: the clock starts when the run does, once per subscription.
  const timed$: Observable<Timed> = defer(() => {
    const start = performance.now();
    return run({ prompt, ...cli }).pipe(
      map((event) => ({ ...event, elapsed_ms: Math.round(performance.now() - start) })),
    );
  });
  try {
    const n = await lastValueFrom(
      timed$.pipe(
        tap((event) => out.write(toJsonl(event))),
        count(),
        // A failed run is still worth keeping: close the file either way.
        finalize(() => out.end()),
      ),
    );
    await closed;
    console.log(`recorded ${n} events`);
  } catch (err) {
    await closed;
    console.error(
      pc.red(`run failed, events so far are in ${path}: ${err instanceof Error ? err.message : String(err)}`),
    );
    process.exitCode = 1;
  }
}

async function replay(path: string, times: number): Promise<void> {
  console.log(`replaying ${path} ${times === 0 ? 'as fast as possible' : `at ${times}x`}`);
  const events$ = fromJsonl(createReadStream(path), {
    onDiagnostic: (issue) => console.warn(pc.yellow(issue.toString())),
  });
  const paced$ =
    times === 0
      ? events$
      : defer(() => {
          const start = performance.now();
          // Wait until each event's own time rather than the gap since the
          // previous one, so the pauses do not add up timer overshoot.
          return events$.pipe(
            concatMap((event) =>
              timer(Math.max(0, start + elapsedOf(event) / times - performance.now())).pipe(map(() => event)),
            ),
          );
        });
  const started = performance.now();
  const summary = await lastValueFrom(paced$.pipe(tap(print), summarize()));
  report(summary, (performance.now() - started) / 1000);
}

function elapsedOf(event: EvoEvent): number {
  const elapsed = (event as Partial<Timed>).elapsed_ms;
  return typeof elapsed === 'number' ? elapsed : 0;
}

function print(event: EvoEvent): void {
  const at = `${(elapsedOf(event) / 1000).toFixed(3).padStart(8)}s`;
  console.log(`${pc.dim(at)}  ${event.type.padEnd(20)} ${pc.dim(detail(event))}`);
}

function detail(event: EvoEvent): string {
  const oneLine = (text: string) => JSON.stringify(text.length > 50 ? `${text.slice(0, 49)}…` : text);
  switch (event.type) {
    case 'thinking':
    case 'text':
      return oneLine(event.content);
    case 'tool_call':
      return event.name;
    case 'tool_result':
      return `${event.name} ${event.success ? 'ok' : 'failed'}`;
    case 'subagent_start':
    case 'subagent_end':
      return event.name;
    case 'subagent_tool_call':
    case 'subagent_tool_result':
      return `${event.subagent}: ${event.name}`;
    case 'subagent_text':
      return `${event.subagent}: ${oneLine(event.content)}`;
    case 'usage_stats':
      return `${event.input_tokens} in, ${event.output_tokens} out`;
    case 'error':
      return event.message;
    default:
      return '';
  }
}

function report(summary: RunSummary, seconds: number): void {
  const { total, failed } = countToolCalls(summary.invocations);
  console.log();
  console.log(`${pc.bold(`replayed ${summary.events} events`)} in ${seconds.toFixed(2)} s`);
  console.log(
    `tool calls: ${total} (${failed} failed) · sub-agents: ${summary.delegations.length} · ` +
      `main-agent tokens: ${summary.usage.totalTokens.toLocaleString('en-US')}`,
  );
  console.log(`response:\n${summary.response ?? pc.yellow('(the run ended without a done event)')}`);
}

function usage(message: string): never {
  console.error(message);
  process.exit(2);
}
