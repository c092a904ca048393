#!/usr/bin/env node
// The `evosci-rx` command: a live terminal view of an EvoSci run, recorded or live.
import { takeUntil, tap, type Observable } from 'rxjs';
import { fromJsonl } from '../src/events/decode/jsonl.js';
import type { EvoEvent } from '../src/events/codecs.js';
import { run, type ExitInfo } from '../src/process/run.js';
import type { RunOutcome } from '../operators/index.js';
import { parseCommand, USAGE, UsageError, type Command, type RunCommand, type ViewCommand } from './args.js';
import { fakeEnvironment } from './fake.js';
import { checkReadable, CommandError, openRecording, transcriptSource, type Recording } from './files.js';
import { complain, onDiagnostic, resumeHint, show, threadLearned, version } from './output.js';
import { replay$ } from './replay.js';
import { Stop } from './stop.js';

/** The exit status of each ending. */
const STATUS: Readonly<Record<RunOutcome, number>> = { completed: 0, 'needs-input': 3, failed: 1, incomplete: 1 };

/** What the command shows, and for `run`, its process's exit and the recording. */
interface Source {
  readonly events$: Observable<EvoEvent>;
  readonly exit?: Promise<ExitInfo>;
  readonly recording?: Recording | undefined;
}

/** The events of a run of EvoSci, and its exit. */
function started(command: RunCommand): { events$: Observable<EvoEvent>; exit: Promise<ExitInfo> } {
  let exited: (info: ExitInfo) => void = () => undefined;
  const exit = new Promise<ExitInfo>((resolve) => (exited = resolve));
  const events$ = run({
    prompt: command.prompt,
    workdir: command.workdir,
    resume: command.resume,
    autoMode: command.autoMode,
    timeoutMs: command.timeoutMs,
    args: [...command.args],
    onDiagnostic,
    onExit: exited,
  });
  return { events$, exit };
}

/** A recording played as a live run: no process, so no exit. */
function replayed({ file, speed }: { file: string; speed: number }): {
  events$: Observable<EvoEvent>;
  exit: undefined;
} {
  checkReadable(file);
  return { events$: replay$(file, speed, onDiagnostic), exit: undefined };
}

/** The transcript's events. */
function viewSource(command: ViewCommand, stop: Stop): Source {
  const input = transcriptSource(command.file);
  // Unsubscribing ends an async iteration only at its next chunk, which a FIFO may never bring: a signal ends the input.
  void stop.signalled.then(() => input.destroy());
  return { events$: fromJsonl(input, { onDiagnostic }) };
}

/** The run's events, written to the recording as they come; `undefined` if a signal came while it waited for a reader. */
async function runSource(command: RunCommand, stop: Stop): Promise<Source | undefined> {
  const recording = command.record === undefined ? undefined : await openRecording(command.record, stop);
  if (command.record !== undefined && !recording) return undefined;
  const { events$, exit } = command.replay ? replayed(command.replay) : started(command);
  if (!recording) return { events$, exit };
  const recorded$ = events$.pipe(tap({ next: (e) => recording.write(e), finalize: () => recording.end() }));
  return { events$: recorded$, exit, recording };
}

async function main(command: Exclude<Command, { kind: 'help' | 'version' | 'fake' }>): Promise<number> {
  // Before anything is opened: a signal is heard whatever the command waits for.
  const stop = new Stop();
  process.stdout.on('error', stop.breaks('standard output'));
  const source = command.kind === 'view' ? viewSource(command, stop) : await runSource(command, stop);
  if (!source) return stop.signalStatus ?? 1;

  const json = command.kind === 'run' && command.json;
  // A recording carries no times: durations are shown only as a run or a replay plays.
  const how = { json, plain: command.plain, timed: command.kind === 'run' };
  const { summary, failed } = await show(source.events$.pipe(takeUntil(stop.stop$)), how, stop);
  await source.recording?.finished();
  if (stop.broken) throw new CommandError(`stopped: ${stop.broken}`);
  if (stop.signalStatus !== undefined) {
    await threadLearned(source.exit);
    return stop.signalStatus;
  }
  if (failed || summary === undefined) return 1;
  if (summary.outcome === 'needs-input') {
    await resumeHint(source.exit, command.kind === 'view' || !command.autoMode);
  }
  return STATUS[summary.outcome];
}

async function start(): Promise<number> {
  const command = parseCommand(process.argv.slice(2));
  if (command.kind === 'help') process.stdout.write(`${USAGE}\n`);
  if (command.kind === 'version') process.stdout.write(`evosci-rx ${version()}\n`);
  if (command.kind === 'fake') process.stdout.write(fakeEnvironment(command));
  return command.kind === 'help' || command.kind === 'version' || command.kind === 'fake' ? 0 : main(command);
}

start().then(
  (status) => (process.exitCode = status),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`evosci-rx: ${err.message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      complain(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    }
  },
);
