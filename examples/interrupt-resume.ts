// Human in the loop: a run without auto mode stops at the agent's question;
// answer it and resume the same thread.
//
//   npx tsx examples/interrupt-resume.ts [--prompt TEXT] [--answer TEXT]... [--speed X]
//   npx tsx examples/interrupt-resume.ts --answer ImageNet-1k --answer 4
//
// With `autoMode: false` the CLI ends the run right after an `ask_user` (or
// `interrupt`) event and its `done`. The thread id is only in the resume hint
// on stderr; `run` parses it and hands it to `onExit`. The answers go back as
// the prompt of `run({ resume: threadId, autoMode: false })`, until a run ends
// without a question. Each `--answer` answers the next question in order; the
// others take the first choice (or "approve" for an approval request).
//
// Without EvoSci installed (or with EVOSCI_RX_FAKE=1) the first run replays
// examples/transcripts/interrupt-run.jsonl and a resume hint through the fake
// CLI, and the resumed run replays resumed-run.jsonl, `--speed` times faster
// than live (default 4).
import { parseArgs } from 'node:util';
import pc from 'picocolors';
import { connect, filter, ignoreElements, lastValueFrom, merge, tap } from 'rxjs';
import { run, type AskUserEvent, type InterruptEvent, type RunOptions } from 'evosci-rx';
import { pairToolCalls, summarize, type RunSummary, type ToolInvocation } from 'evosci-rx/operators';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

const { values: opts } = parseArgs({
  options: {
    prompt: { type: 'string', default: 'Train a baseline image classifier on the data in /data' },
    answer: { type: 'string', multiple: true, default: [] },
    speed: { type: 'string', default: '4' },
  },
});
const speed = Number(opts.speed);
if (!(speed > 0)) {
  console.error(`--speed must be a positive number, not ${JSON.stringify(opts.speed)}`);
  process.exit(2);
}
const answers = [...opts.answer];
/** The thread id in the fake CLI's resume hint. */
const FAKE_THREAD = '7c1e52d0-4b8a-4f3e-9a61-2f0d3c9be4a1';

/** Answers are picked automatically when not given: stop an agent that keeps asking. */
const MAX_ROUNDS = 5;

let threadId: string | undefined;
let prompt = opts.prompt;
for (let round = 1; ; round++) {
  if (round > MAX_ROUNDS) {
    console.error(pc.red(`Still asking after ${MAX_ROUNDS} rounds; resume it yourself: EvoSci --resume ${threadId}`));
    process.exit(1);
  }
  // The fake does not read --resume: each round gets its own script.
  const { fake, ...cli } = evosciCommand(
    round === 1
      ? [{ transcript: transcript('interrupt-run.jsonl'), ...livePacing(speed) }, { resumeHint: FAKE_THREAD }]
      : [{ transcript: transcript('resumed-run.jsonl'), ...livePacing(speed) }],
  );
  console.log(
    pc.bold(round === 1 ? `Run: ${prompt}` : `Resuming thread ${threadId}`) + (fake ? pc.dim(' (fake EvoSci)') : ''),
  );
  const summary = await runAndShow({
    prompt,
    resume: round === 1 ? undefined : threadId,
    autoMode: false,
    ...cli,
    // A resumed run may print the same hint again, or none.
    onExit: (info) => (threadId = info.threadId ?? threadId),
  });

  if (summary.questions.length === 0 && summary.interrupts.length === 0) {
    console.log(`\n${pc.bold('Final response:')}\n${summary.response ?? pc.yellow('(no done event)')}`);
    break;
  }
  if (summary.response) console.log(`\n${pc.bold('Agent:')} ${summary.response}`);
  if (threadId === undefined) {
    console.error(pc.red('The run stopped for input but wrote no resume hint on stderr: cannot resume.'));
    process.exit(1);
  }
  prompt = [...summary.questions.flatMap(answerQuestions), ...summary.interrupts.map(answerInterrupt)].join('\n');
  console.log();
}

/** Shows each tool call as it finishes, and resolves with the run's summary: one process for both. */
function runAndShow(options: RunOptions): Promise<RunSummary> {
  return lastValueFrom(
    run(options).pipe(
      connect((events$) =>
        merge(
          events$.pipe(
            pairToolCalls(),
            filter((call) => call.status !== 'running'),
            tap(showCall),
            ignoreElements(),
          ),
          events$.pipe(summarize()),
        ),
      ),
    ),
  );
}

function showCall(call: ToolInvocation): void {
  const mark = { running: '…', succeeded: pc.green('✓'), failed: pc.red('✗'), unfinished: pc.yellow('…') }[call.status];
  const args = JSON.stringify(call.args);
  // The questions are shown in full below.
  const detail = call.name === 'ask_user' ? 'waiting for an answer' : args.length > 70 ? `${args.slice(0, 69)}…` : args;
  console.log(`  ${mark} ${call.name} ${pc.dim(detail)}`);
}

/** Prints the questions of an `ask_user` event and picks an answer for each. */
function answerQuestions(event: AskUserEvent): string[] {
  return event.questions.map((raw, i) => {
    const q = readQuestion(raw);
    console.log(`\n${pc.cyan('?')} ${pc.bold(q.text)}${q.required ? '' : pc.dim(' (optional)')}`);
    q.choices.forEach((choice, n) => console.log(`  ${n + 1}. ${choice}`));
    const answer = answers.shift() ?? q.choices[0] ?? (q.required ? 'You decide.' : 'No preference.');
    console.log(`  ${pc.green('→')} ${answer}`);
    return `${q.text || `Question ${i + 1}`} ${answer}`;
  });
}

/** Prints an approval request and approves it, unless `--answer` says otherwise. */
function answerInterrupt(event: InterruptEvent): string {
  console.log(`\n${pc.cyan('?')} ${pc.bold('Approve these actions?')}`);
  for (const request of event.action_requests) console.log(`  ${pc.dim(JSON.stringify(request))}`);
  const answer = answers.shift() ?? 'approve';
  console.log(`  ${pc.green('→')} ${answer}`);
  return answer;
}

interface Question {
  readonly text: string;
  readonly choices: readonly string[];
  readonly required: boolean;
}

/** `questions` are untyped on the wire: read what is there, show the rest raw. */
function readQuestion(raw: unknown): Question {
  const q = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const text = typeof q['question'] === 'string' ? q['question'] : JSON.stringify(raw);
  const choices = Array.isArray(q['choices'])
    ? q['choices'].map((c: unknown) =>
        typeof c === 'object' && c !== null && typeof (c as { value?: unknown }).value === 'string'
          ? (c as { value: string }).value
          : String(c),
      )
    : [];
  return { text, choices, required: q['required'] !== false };
}
