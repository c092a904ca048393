// Human in the loop: a run without auto mode stops at the agent's question;
// reply in a new run that resumes the same thread.
//
//   npx tsx examples/interrupt-resume.ts [--prompt TEXT] [--answer TEXT]... [--speed X]
//   npx tsx examples/interrupt-resume.ts --answer ImageNet-1k --answer 4
//
// With `autoMode: false` the CLI ends the run right after an `ask_user` (or
// `interrupt`) event and its `done`: `summarize()` says `needs-input`. The
// thread id is only in the resume hint EvoSci prints when it exits; `converse`
// takes it from each run's exit into the next, which resumes the thread with
// the replies as its prompt, until a run ends without a question. EvoSci sends
// that prompt as a new message in the thread, not as the paused call's answer:
// the `ask_user` call never gets a result, and the agent reads the reply as a
// new request that follows its question, so the reply repeats each question.
// Each `--answer` replies to the next question in order; the others take the
// first choice (or "approve" for an approval request).
//
// Without EvoSci installed (or with EVOSCI_RX_FAKE=1) the first run replays
// examples/transcripts/interrupt-run.jsonl and a resume hint through the fake
// CLI, and the resumed run replays resumed-run.jsonl, `--speed` times faster
// than live (default 4).
import { parseArgs } from 'node:util';
import pc from 'picocolors';
import { concatMap, connect, filter, ignoreElements, lastValueFrom, merge, Subject, tap, type Observable } from 'rxjs';
import { converse, type AskUserEvent, type EvoEvent, type InterruptEvent } from 'evosci-rx';
import {
  briefArgs,
  jsonPreview,
  pairToolCalls,
  summarize,
  type RunSummary,
  type ToolInvocation,
} from 'evosci-rx/operators';
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

// One conversation: each reply is the next prompt, a new message in a run that resumes
// the thread the one before printed. The fake does not read --resume: a resumed run plays its own script.
const { fake, ...cli } = evosciCommand([
  { onResume: [{ transcript: transcript('resumed-run.jsonl'), ...livePacing(speed) }] },
  { transcript: transcript('interrupt-run.jsonl'), ...livePacing(speed) },
  { resumeHint: FAKE_THREAD },
]);
const prompts$ = new Subject<string>();
const conversation = lastValueFrom(
  prompts$.pipe(
    converse({ autoMode: false, ...cli }),
    concatMap((turn) => {
      if (turn.index > 0 && turn.resume === undefined) {
        throw new Error('The run stopped for input but wrote no resume hint on stderr: cannot resume.');
      }
      const title = turn.index === 0 ? `Run: ${turn.prompt}` : `Resuming thread ${turn.resume}`;
      console.log(pc.bold(title) + (fake ? pc.dim(' (fake EvoSci)') : ''));
      return showAndSummarize(turn.events$);
    }),
    tap((summary) => {
      if (summary.outcome !== 'needs-input') {
        console.log(`\n${pc.bold('Final response:')}\n${summary.response ?? pc.yellow('(no done event)')}`);
        return prompts$.complete();
      }
      if (summary.response) console.log(`\n${pc.bold('Agent:')} ${summary.response}`);
      if (++rounds >= MAX_ROUNDS) throw new Error(`Still asking after ${MAX_ROUNDS} rounds.`);
      const answer = [
        ...summary.pendingQuestions.flatMap(answerQuestions),
        ...summary.pendingApprovals.map(answerInterrupt),
      ].join('\n');
      console.log();
      prompts$.next(answer);
    }),
  ),
  { defaultValue: undefined },
);
let rounds = 0;
prompts$.next(opts.prompt);
await conversation.catch((err: unknown) => {
  console.error(pc.red(err instanceof Error ? err.message : String(err)));
  process.exit(1);
});

/** Shows each tool call as it finishes, and gives the run's summary: one process for both. */
function showAndSummarize(events$: Observable<EvoEvent>): Observable<RunSummary> {
  return events$.pipe(
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
  );
}

function showCall(call: ToolInvocation): void {
  const mark = {
    running: '…',
    succeeded: pc.green('✓'),
    failed: pc.red('✗'),
    unfinished: pc.yellow('…'),
    'awaiting-input': pc.yellow('?'),
  }[call.status];
  // The questions are shown in full below.
  const detail = call.name === 'ask_user' ? 'waiting for a reply' : briefArgs(call.args, 70);
  console.log(`  ${mark} ${call.name} ${pc.dim(detail)}`);
}

/** Prints the questions of an `ask_user` event and picks an answer for each. */
function answerQuestions(event: AskUserEvent): string[] {
  return event.questions.map((q, i) => {
    const choices = (q.choices ?? []).map((c) => c.value);
    console.log(`\n${pc.cyan('?')} ${pc.bold(q.question)}${q.required === false ? pc.dim(' (optional)') : ''}`);
    choices.forEach((choice, n) => console.log(`  ${n + 1}. ${choice}`));
    const answer = answers.shift() ?? choices[0] ?? (q.required === false ? 'No preference.' : 'You decide.');
    console.log(`  ${pc.green('→')} ${answer}`);
    return `${q.question || `Question ${i + 1}`} ${answer}`;
  });
}

/** Prints an approval request and approves it, unless `--answer` says otherwise. */
function answerInterrupt(event: InterruptEvent): string {
  console.log(`\n${pc.cyan('?')} ${pc.bold('Approve these actions?')}`);
  for (const request of event.action_requests) {
    console.log(`  ${request.name} ${pc.dim(jsonPreview(request.args ?? {}))}`);
  }
  const answer = answers.shift() ?? 'approve';
  console.log(`  ${pc.green('→')} ${answer}`);
  return answer;
}
