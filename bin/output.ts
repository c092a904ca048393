// What the command prints: the view or JSONL while events come, skipped
// lines, the command that answers a run that stopped to ask.
import { readFileSync } from 'node:fs';
import { catchError, connect, EMPTY, ignoreElements, merge, tap, throwError, type Observable } from 'rxjs';
import { showControls } from '../src/common/terminalText.js';
import type { DecodeIssue } from '../src/events/decode/decodeLine.js';
import { toJsonl } from '../src/events/decode/jsonl.js';
import type { EvoEvent } from '../src/events/codecs.js';
import { SpawnError } from '../src/events/errors.js';
import type { ExitInfo } from '../src/process/run.js';
import { summarize, type RunSummary } from '../operators/index.js';
import { liveView } from '../viewer/liveView.js';
import type { Stop } from './stop.js';

export function version(): string {
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

/** One line on stderr, controls shown rather than obeyed. */
export function complain(message: string): void {
  process.stderr.write(`evosci-rx: ${showControls(message, { keepNewlines: true })}\n`);
}

export function onDiagnostic(issue: DecodeIssue): void {
  process.stderr.write(`evosci-rx: skipped ${showControls(issue.toString())}\n`);
}

/** An error as the command says it: a missing EvoSci in the command's own terms. */
function sayError(err: unknown): string {
  if (err instanceof SpawnError && (err.cause as { code?: string } | undefined)?.code === 'ENOENT') {
    return `${err.shortMessage.replace(/;.*$/, '')}: install EvoScientist 0.2.1 or later, or set EVOSCI_BIN to its path`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Shows `events$` as the live view, or as JSONL on stdout with `json`, and
 * the summary of what came, also when the events failed (the error is then
 * said on stderr, unless the command was stopped).
 */
export async function show(
  events$: Observable<EvoEvent>,
  how: { json: boolean; plain: boolean; timed: boolean },
  stop: Stop,
): Promise<{ summary: RunSummary | undefined; failed: boolean }> {
  let failure: { error: unknown } | undefined;
  let seen = 0;
  // After some events, an error still shows the summary of what came; a run that never started shows none.
  const ended$ = events$.pipe(
    tap(() => seen++),
    catchError((error: unknown) => {
      if (seen === 0) return throwError(() => error);
      failure = { error };
      return EMPTY;
    }),
  );
  let summary: RunSummary | undefined;
  try {
    summary = how.json
      ? await jsonLines(ended$, stop.breaks('standard output'))
      : await liveView(ended$, { interactive: how.plain ? false : undefined, showErrors: false, timed: how.timed });
  } catch (error) {
    failure = { error };
  }
  if (failure && !stop.broken && stop.signalStatus === undefined) complain(sayError(failure.error));
  return { summary, failed: failure !== undefined };
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

/**
 * The exact command that goes on with a run that stopped to ask; the thread
 * id comes when EvoSci exits. Resuming sends a new message in the thread:
 * the paused call itself gets no answer.
 */
export async function resumeHint(exit: Promise<ExitInfo> | undefined, noAutoMode: boolean): Promise<void> {
  let thread = '<thread id from EvoSci’s resume hint>';
  if (exit) {
    process.stderr.write('evosci-rx: waiting for EvoSci to save the session and print its thread id…\n');
    thread = (await exit).threadId ?? thread;
  }
  const mode = noAutoMode || !exit ? ' --no-auto-mode' : '';
  process.stdout.write(
    `\nTo go on in this thread (your text is a new message; the paused call gets no answer), run:\n` +
      `  evosci-rx run --resume ${thread}${mode} -p "<your reply>"\n`,
  );
}

/** After Ctrl-C: the command that goes on with the thread, once EvoSci has printed its id while stopping. */
export async function threadLearned(exit: Promise<ExitInfo> | undefined): Promise<void> {
  const thread = exit && (await exit).threadId;
  if (thread !== undefined)
    process.stderr.write(`evosci-rx: to go on in this thread: evosci-rx run --resume ${thread} -p "…"\n`);
}
