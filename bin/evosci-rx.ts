#!/usr/bin/env node
// The `evosci-rx` command: a live terminal view of an EvoSci run, recorded or live.
import { createReadStream, createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { finalize, fromEvent, takeUntil, tap, type Observable } from 'rxjs';
import type { DecodeIssue } from '../src/decode/decodeLine.js';
import { fromJsonl, toJsonl } from '../src/decode/jsonl.js';
import type { EvoEvent } from '../src/events.js';
import { run } from '../src/process/run.js';
import { liveView } from '../viewer/liveView.js';
import { showControls } from '../src/controls.js';

const USAGE = `Usage:
  evosci-rx view FILE|-     show a stream-json transcript; - reads stdin:
                            EvoSci -p "…" --output-format stream-json | evosci-rx view -
  evosci-rx run -p PROMPT [--workdir DIR] [--record FILE] [--no-auto-mode] [--resume ID] [-- EVOSCI_ARGS…]
                            start EvoSci ($EVOSCI_BIN or EvoSci on the PATH) and show it live
Options:
  --plain                   one line per finished step, even on a terminal
  -h, --help`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    prompt: { type: 'string', short: 'p' },
    workdir: { type: 'string' },
    record: { type: 'string' },
    resume: { type: 'string' },
    'no-auto-mode': { type: 'boolean' },
    plain: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

const onDiagnostic = (issue: DecodeIssue) =>
  process.stderr.write(`evosci-rx: skipped ${showControls(issue.toString())}\n`);

function source(): Observable<EvoEvent> | string {
  const [command, file, ...extra] = positionals;
  if (values.help) return USAGE;
  if (command === 'view' && file !== undefined && extra.length === 0) {
    return fromJsonl(file === '-' ? process.stdin : createReadStream(file), { onDiagnostic });
  }
  if (command === 'run' && values.prompt !== undefined) {
    const events$ = run({
      prompt: values.prompt,
      workdir: values.workdir,
      resume: values.resume,
      autoMode: !values['no-auto-mode'],
      args: positionals.slice(1),
      onDiagnostic,
    });
    if (values.record === undefined) return events$;
    const record = createWriteStream(values.record);
    return events$.pipe(
      tap((event) => record.write(toJsonl(event))),
      finalize(() => record.end()),
    );
  }
  return `evosci-rx: ${command === undefined ? 'no command' : `cannot read the arguments of ${command}`}\n\n${USAGE}`;
}

const events$ = source();
if (typeof events$ === 'string') {
  const help = Boolean(values.help);
  (help ? process.stdout : process.stderr).write(`${events$}\n`);
  process.exitCode = help ? 0 : 2;
} else {
  let interrupted = false;
  const sigint$ = fromEvent(process, 'SIGINT').pipe(tap(() => (interrupted = true)));
  liveView(events$.pipe(takeUntil(sigint$)), { interactive: values.plain ? false : undefined }).then(
    () => (process.exitCode = interrupted ? 130 : 0),
    () => (process.exitCode = 1),
  );
}
