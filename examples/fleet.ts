// A fleet of EvoSci tasks with bounded concurrency and a live status table.
//
//   npx tsx examples/fleet.ts [--tasks 6] [--concurrency 3] [--speed 4] [--tag LABEL]
//
// `mergeMap(task => run(…), K)` keeps at most K CLIs running; the others wait
// as `queued`. Each row shows the task's state, its tool calls so far and its
// tokens, redrawn in place on a terminal and printed as plain lines when
// stdout is a pipe. Ctrl-C cancels every run (their process groups are
// killed), waits for the processes to go, prints the final table and exits
// 130; a second Ctrl-C while it waits kills them at once and quits. `--tag`
// appends a label to every prompt, to tell this fleet's processes apart in `ps`.
//
// Without EvoSci installed (or with EVOSCI_RX_FAKE=1) every task replays
// examples/transcripts/demo-run.jsonl through the fake CLI, `--speed` times
// faster than live.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import logUpdate from 'log-update';
import pc from 'picocolors';
import {
  auditTime,
  BehaviorSubject,
  catchError,
  concat,
  connect,
  defer,
  distinctUntilChanged,
  filter,
  firstValueFrom,
  from,
  fromEvent,
  lastValueFrom,
  map,
  merge,
  mergeMap,
  type Observable,
  of,
  scan,
  takeUntil,
  tap,
} from 'rxjs';
import { run } from 'evosci-rx';
import { isToolCall, pairToolCalls, sumUsage } from 'evosci-rx/operators';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

const { values: opts } = parseArgs({
  options: {
    tasks: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '3' },
    speed: { type: 'string', default: '4' },
    tag: { type: 'string' },
  },
});
const taskCount = positive('tasks', opts.tasks, true);
const concurrency = positive('concurrency', opts.concurrency, true);
const speed = positive('speed', opts.speed);

const PROMPTS = [
  'Survey sparse attention methods and write notes.md',
  'Benchmark FlashAttention against xFormers at 32k tokens',
  'Summarize recent state-space models (Mamba, RWKV)',
  'Reproduce the LoRA rank ablation on GLUE',
  'Compare tokenizers for code models',
  'Find open datasets for protein structure prediction',
];

type State = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
interface Row {
  readonly id: number;
  readonly prompt: string;
  state: State;
  tools: number;
  tokens: number;
  error?: string;
}
type Patch = Partial<Pick<Row, 'state' | 'tools' | 'tokens' | 'error'>>;
interface Change {
  readonly id: number;
  readonly patch: Patch;
}

const rows: Row[] = Array.from({ length: taskCount }, (_, i) => {
  const base = PROMPTS[i % PROMPTS.length]!;
  const prompt = (i < PROMPTS.length ? base : `${base} (#${i + 1})`) + (opts.tag ? ` [${opts.tag}]` : '');
  return { id: i + 1, prompt, state: 'queued', tools: 0, tokens: 0 };
});

const { fake, ...cli } = evosciCommand([{ transcript: transcript('demo-run.jsonl'), ...livePacing(speed) }]);
// Real runs must not share a working directory.
const workdirs = fake ? undefined : mkdtempSync(join(tmpdir(), 'evosci-fleet-'));

/** Processes started and not yet exited: Ctrl-C waits for this to reach 0. */
const alive = new BehaviorSubject(0);

function runTask(row: Row): Observable<Change> {
  return defer(() => {
    const workdir = workdirs && join(workdirs, `task-${row.id}`);
    if (workdir) mkdirSync(workdir, { recursive: true });
    alive.next(alive.value + 1);
    const events$ = run({ prompt: row.prompt, workdir, ...cli, onExit: () => alive.next(alive.value - 1) });
    return concat(
      of<Patch>({ state: 'running' }),
      // `connect` shares one subscription, hence one process, between both operators.
      events$.pipe(
        connect((shared) =>
          merge(
            shared.pipe(
              pairToolCalls(),
              // `task` calls start sub-agents: counted as tool calls nowhere, as in the viewer's summary.
              filter((invocation) => isToolCall(invocation)),
              // Snapshots repeat as a call changes and finishes; count each invocation once.
              scan((keys, invocation) => keys.add(invocation.key), new Set<string>()),
              map((keys) => keys.size),
              distinctUntilChanged(),
              map((tools): Patch => ({ tools })),
            ),
            shared.pipe(
              sumUsage(),
              // The main agent's: sub-agents spend tokens that no event reports.
              map((usage): Patch => ({ tokens: usage.totalTokens })),
            ),
          ),
        ),
      ),
      of<Patch>({ state: 'done' }),
    );
  }).pipe(
    // One failed task must not stop the fleet.
    catchError((err: unknown) =>
      of<Patch>({ state: 'failed', error: err instanceof Error ? err.message : String(err) }),
    ),
    map((patch) => ({ id: row.id, patch })),
  );
}

let interrupted = false;
const sigint$ = fromEvent(process, 'SIGINT').pipe(tap(() => (interrupted = true)));

// A terminal without a size (some CI ptys) cannot be redrawn in place.
const tty = process.stdout.isTTY === true && (process.stdout.rows ?? 0) > 0;
const fleet$ = from(rows).pipe(
  mergeMap(runTask, concurrency),
  takeUntil(sigint$),
  tap(({ id, patch }) => Object.assign(rows[id - 1]!, patch)),
);
const view$ = tty
  ? fleet$.pipe(
      auditTime(80),
      tap(() => logUpdate(table())),
    )
  : fleet$.pipe(
      filter(({ patch }) => patch.state !== undefined),
      tap(({ id }) => console.log(statusLine(rows[id - 1]!))),
    );

console.log(
  `${taskCount} tasks, ${concurrency} at a time` +
    (fake ? pc.dim(` (fake EvoSci replaying demo-run.jsonl at ${speed}x)`) : ''),
);
await lastValueFrom(view$, { defaultValue: undefined });

for (const row of rows) if (row.state === 'queued' || row.state === 'running') row.state = 'cancelled';
if (interrupted && alive.value > 0) {
  const note = `cancelled: waiting for ${alive.value} process(es) to exit`;
  if (tty) logUpdate(table(pc.yellow(note)));
  else console.log(note);
  await firstValueFrom(alive.pipe(filter((n) => n === 0)));
}
if (tty) {
  logUpdate(table());
  logUpdate.done();
} else {
  console.log(`\n${table()}`);
}
for (const row of rows) if (row.error) console.error(pc.red(`task ${row.id}: ${row.error}`));
process.exitCode = interrupted ? 130 : rows.some((r) => r.state === 'failed') ? 1 : 0;

function table(note?: string): string {
  const promptWidth = Math.max(12, Math.min(48, (process.stdout.columns ?? 100) - 40));
  const header = pc.bold(
    `${'#'.padStart(3)}  ${'task'.padEnd(promptWidth)}  ${'state'.padEnd(9)}  ${'tools'.padStart(5)}  ${'tokens'.padStart(9)}`,
  );
  const lines = rows.map(
    (row) =>
      `${String(row.id).padStart(3)}  ${fit(row.prompt, promptWidth)}  ${paint(row.state, row.state.padEnd(9))}  ${String(row.tools).padStart(5)}  ${tokens(row.tokens).padStart(9)}`,
  );
  const byState = (['running', 'queued', 'done', 'failed', 'cancelled'] as const)
    .map((state) => [state, rows.filter((r) => r.state === state).length] as const)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  const total = rows.reduce((sum, r) => sum + r.tokens, 0);
  const footer = pc.dim(`${byState.join(' · ')} · ${tokens(total)} main-agent tokens`);
  return [header, ...lines, footer, ...(note ? [note] : [])].join('\n');
}

function statusLine(row: Row): string {
  const calls = `${row.tools} tool ${row.tools === 1 ? 'call' : 'calls'}`;
  const counts = row.state === 'running' ? '' : `  ${calls}, ${tokens(row.tokens)} main-agent tokens`;
  return `task ${row.id} ${paint(row.state, row.state)}${counts}`;
}

function paint(state: State, text: string): string {
  const color = { queued: pc.dim, running: pc.cyan, done: pc.green, failed: pc.red, cancelled: pc.yellow }[state];
  return color(text);
}

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

function tokens(n: number): string {
  return n.toLocaleString('en-US');
}

function positive(name: string, value: string, integer = false): number {
  const n = Number(value);
  if (!(n > 0) || (integer && !Number.isInteger(n))) {
    console.error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return n;
}
