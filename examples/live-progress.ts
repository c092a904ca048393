// A live terminal view of one EvoSci run: streaming assistant text, each tool
// call with a spinner while it runs and ✓/✗ when done, the sub-agent tree with
// its own tools, a running token counter, then the final response and a
// summary. A terminal that is not a TTY gets one plain line per finished step.
//
//   npx tsx examples/live-progress.ts -p "Survey sparse attention into notes.md" [--workdir DIR]
//   npx tsx examples/live-progress.ts --demo [--speed 2]
//
// With `$EVOSCI_BIN` set or `EvoSci` on the PATH it runs the real CLI;
// otherwise (and always with --demo) the fake CLI replays a bundled run.
import { parseArgs } from 'node:util';
import { fromEvent, takeUntil, tap } from 'rxjs';
import { run } from 'evosci-rx';
import { liveView } from 'evosci-rx/viewer';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

const { values } = parseArgs({
  options: {
    prompt: { type: 'string', short: 'p', default: 'Survey recent work on sparse attention and write notes.md' },
    workdir: { type: 'string' },
    demo: { type: 'boolean' },
    speed: { type: 'string', default: '1' },
  },
});

if (values.demo) process.env['EVOSCI_RX_FAKE'] = '1';
const cli = evosciCommand([
  { stderr: 'Loading agent…' },
  { transcript: transcript('demo-run.jsonl'), ...livePacing(Number(values.speed)) },
  { resumeHint: 'demo-7f3a9c' },
]);
if (cli.fake) console.log(`Replaying a recorded EvoSci run through the fake CLI: ${values.prompt}\n`);

let interrupted = false;
const run$ = run({ prompt: values.prompt, workdir: values.workdir, command: cli.command, env: cli.env }).pipe(
  // Ctrl-C unsubscribes, which stops EvoSci and every process it started.
  takeUntil(fromEvent(process, 'SIGINT').pipe(tap(() => (interrupted = true)))),
);

try {
  await liveView(run$);
  process.exitCode = interrupted ? 130 : 0;
} catch {
  process.exitCode = 1;
}
