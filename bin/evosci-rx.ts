#!/usr/bin/env node
// The `evosci-rx` command: a live terminal view of an EvoSci run, recorded or live.
import { closeSync, createReadStream, createWriteStream, openSync, readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect, ignoreElements, merge, Subject, takeUntil, tap, type Observable } from 'rxjs';
import { showControls } from '../src/controls.js';
import type { DecodeIssue } from '../src/decode/decodeLine.js';
import { fromJsonl, toJsonl } from '../src/decode/jsonl.js';
import type { EvoEvent } from '../src/events.js';
import { run, type ExitInfo } from '../src/process/run.js';
import { summarize, type RunOutcome, type RunSummary } from '../operators/summarize.js';
import { liveView } from '../viewer/liveView.js';

const USAGE = `Usage:
  evosci-rx run -p PROMPT [options] [-- EVOSCI_ARGS…]
                          start EvoSci and show the run live
  evosci-rx view FILE|-   show a recorded stream-json transcript; - reads stdin:
                          EvoSci -p "…" --output-format stream-json | evosci-rx view -

Options of run:
  -p, --prompt TEXT       the task (a value starting with "-": --prompt=-TEXT)
  --workdir DIR           the directory the agent works in
  --resume ID             continue a thread: the id in EvoSci's resume hint
  --no-auto-mode          stop at approvals and questions instead of answering them
  --timeout DURATION      stop the run after 90s, 30m, 2h (a bare number is seconds)
  --record FILE           also write the events to FILE as JSONL
  --json                  write the events to stdout as JSONL instead of the view
Options of both:
  --plain                 one line per finished step, even on a terminal
  -h, --help              show this help
  -V, --version           show the version

The CLI started is $EVOSCI_BIN, else EvoSci on the PATH (EvoScientist 0.2.1 or later).
Exit status: 0 completed, 1 failed or incomplete, 2 usage error, 3 needs input
(answer with --resume), 128+n stopped by signal n (130 for Ctrl-C).`;

/** The exit status of each ending. */
const STATUS: Readonly<Record<RunOutcome, number>> = { completed: 0, 'needs-input': 3, failed: 1, incomplete: 1 };
const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

class UsageError extends Error {}

function fail(message: string): never {
  process.stderr.write(`evosci-rx: ${showControls(message, true)}\n`);
  process.exit(1);
}

function version(): string {
  // dist/bin/ in the package, bin/ in a checkout.
  for (const path of ['../../package.json', '../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // Not here: the other layout.
    }
  }
  return 'unknown';
}

/** `90s`, `30m`, `2h`, `1500ms`, or seconds. */
function duration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--timeout takes a duration such as 90s, 30m or 2h, not ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1000;
  return Number(match[1]) * unit;
}

const OPTIONS = {
  prompt: { type: 'string', short: 'p' },
  workdir: { type: 'string' },
  record: { type: 'string' },
  resume: { type: 'string' },
  timeout: { type: 'string' },
  'no-auto-mode': { type: 'boolean' },
  json: { type: 'boolean' },
  plain: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

function readArgs() {
  let parsed;
  try {
    parsed = parseArgs({ args: process.argv.slice(2), options: OPTIONS, allowPositionals: true, tokens: true });
  } catch (err) {
    const message = (err as Error).message;
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    if (unknown) throw new UsageError(`unknown option ${unknown[1]}; EvoSci's own options go after -- (run only)`);
    // Node's messages run over several lines; a usage error is one.
    throw new UsageError(message.replace(/\s*\n\s*/g, ' '));
  }
  const { values, tokens } = parsed;
  const terminator = tokens.findIndex((t) => t.kind === 'option-terminator');
  const before = tokens.filter((t, i) => t.kind === 'positional' && (terminator === -1 || i < terminator));
  const after =
    terminator === -1 ? [] : tokens.slice(terminator + 1).map((t) => (t.kind === 'positional' ? t.value : ''));
  const [command, ...rest] = before.map((t) => (t.kind === 'positional' ? t.value : ''));
  return { values, command, rest, after };
}

function onDiagnostic(issue: DecodeIssue): void {
  process.stderr.write(`evosci-rx: skipped ${showControls(issue.toString())}\n`);
}

/** The transcript of `view`, checked before anything is drawn. */
function transcript(file: string): Observable<EvoEvent> {
  if (file === '-') return fromJsonl(process.stdin, { onDiagnostic });
  let stat;
  try {
    stat = statSync(file);
  } catch (err) {
    fail(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  if (stat.isDirectory()) fail(`cannot read ${file}: it is a directory`);
  return fromJsonl(createReadStream(file), { onDiagnostic });
}

/** The file `--record` writes, opened now so that a wrong path fails before the run starts. */
function recording(path: string, broken: (err: Error) => void): { file: NodeJS.WritableStream; closed: Promise<void> } {
  try {
    closeSync(openSync(path, 'w'));
  } catch (err) {
    fail(`cannot record to ${path}: ${(err as Error).message}`);
  }
  const file = createWriteStream(path);
  // A full disk says so only when the data is flushed: the command waits for that before it ends.
  const closed = new Promise<void>((resolve) => {
    file.on('error', (err) => {
      broken(err);
      resolve();
    });
    file.on('close', resolve);
  });
  return { file, closed };
}

async function main(): Promise<number> {
  const { values, command, rest, after } = readArgs();
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`evosci-rx ${version()}\n`);
    return 0;
  }
  if (command === undefined) throw new UsageError('no command: run or view');
  if (command !== 'run' && command !== 'view') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const runOnly = (['prompt', 'workdir', 'record', 'resume', 'timeout', 'no-auto-mode', 'json'] as const).filter(
    (name) => values[name] !== undefined,
  );
  if (command === 'view') {
    if (runOnly.length > 0) throw new UsageError(`--${runOnly[0]} is an option of run, not of view`);
    if (rest.length !== 1 || after.length > 0) throw new UsageError('view takes one FILE, or - for stdin');
  } else {
    if (values.prompt === undefined) throw new UsageError('run needs a prompt: -p PROMPT');
    if (values.prompt === '') throw new UsageError('the prompt is empty');
    if (rest.length > 0)
      throw new UsageError(`unexpected ${JSON.stringify(rest[0])}; EvoSci's own options go after --`);
  }

  // Whatever stops the run early: a signal, an output that broke.
  const stop$ = new Subject<void>();
  let stoppedBy: keyof typeof SIGNALS | undefined;
  for (const name of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) {
    process.on(name, () => {
      stoppedBy ??= name;
      stop$.next();
    });
  }
  let broken: string | undefined;
  const breaks = (what: string) => (err: Error) => {
    broken ??= (err as NodeJS.ErrnoException).code === 'EPIPE' ? `${what} was closed` : `${what}: ${err.message}`;
    stop$.next();
  };
  process.stdout.on('error', breaks('standard output'));

  let exit: Promise<ExitInfo> | undefined;
  let recorded: Promise<void> | undefined;
  let events$: Observable<EvoEvent>;
  if (command === 'view') events$ = transcript(rest[0]!);
  else {
    let exited: (info: ExitInfo) => void = () => undefined;
    exit = new Promise((resolve) => (exited = resolve));
    events$ = run({
      prompt: values.prompt!,
      workdir: values.workdir,
      resume: values.resume,
      autoMode: !values['no-auto-mode'],
      timeoutMs: values.timeout === undefined ? undefined : duration(values.timeout),
      args: after,
      onDiagnostic,
      onExit: exited,
    });
    if (values.record !== undefined) {
      const { file, closed } = recording(values.record, breaks(`recording to ${values.record}`));
      recorded = closed;
      events$ = events$.pipe(tap({ next: (e) => file.write(toJsonl(e)), finalize: () => file.end() }));
    }
  }
  events$ = events$.pipe(takeUntil(stop$));

  let summary: RunSummary | undefined;
  try {
    summary = values.json
      ? await jsonLines(events$, breaks('standard output'))
      : await liveView(events$, { interactive: values.plain ? false : undefined, showErrors: false });
  } catch (err) {
    if (!broken && !stoppedBy) process.stderr.write(`evosci-rx: ${showControls((err as Error).message, true)}\n`);
  }
  await recorded;
  if (broken) fail(`stopped: ${broken}`);
  if (stoppedBy) return 128 + SIGNALS[stoppedBy];
  if (summary === undefined) return 1;
  if (summary.outcome === 'needs-input') await resumeHint(exit, values['no-auto-mode'] === true);
  return STATUS[summary.outcome];
}

/** `--json`: each event as a line on stdout; the summary decides the exit status. */
function jsonLines(events$: Observable<EvoEvent>, broken: (err: Error) => void): Promise<RunSummary | undefined> {
  let summary: RunSummary | undefined;
  return new Promise((resolve, reject) =>
    events$
      .pipe(
        connect((shared$) =>
          merge(
            shared$.pipe(
              tap((event) => {
                // A closed pipe can fail the write itself, not only with an 'error' event.
                try {
                  process.stdout.write(toJsonl(event));
                } catch (err) {
                  broken(err as Error);
                }
              }),
              ignoreElements(),
            ),
            shared$.pipe(summarize()),
          ),
        ),
      )
      .subscribe({ next: (s) => (summary = s), error: reject, complete: () => resolve(summary) }),
  );
}

/** The exact command that answers a run that stopped to ask; the thread id comes when EvoSci exits. */
async function resumeHint(exit: Promise<ExitInfo> | undefined, noAutoMode: boolean): Promise<void> {
  let thread = '<thread id from EvoSci’s resume hint>';
  if (exit) {
    process.stderr.write('evosci-rx: waiting for EvoSci to save the session and print its thread id…\n');
    thread = (await exit).threadId ?? thread;
  }
  const mode = noAutoMode || !exit ? ' --no-auto-mode' : '';
  process.stdout.write(`\nTo answer, run:\n  evosci-rx run --resume ${thread}${mode} -p "<your answer>"\n`);
}

main().then(
  (status) => (process.exitCode = status),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`evosci-rx: ${err.message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`evosci-rx: ${showControls(err instanceof Error ? err.message : String(err), true)}\n`);
      process.exitCode = 1;
    }
  },
);
