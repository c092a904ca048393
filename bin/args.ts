// The command line of `evosci-rx`: its usage, and the one command it asks for, checked.
import { parseArgs } from 'node:util';

export const USAGE = `Usage:
  evosci-rx run -p PROMPT [options] [-- EVOSCI_ARGS…]
                          start EvoSci and show the run live
  evosci-rx run --replay FILE [--speed N]
                          replay a recorded transcript as a live run (demos, UI work)
  evosci-rx view FILE|-   show a recorded stream-json transcript; - reads stdin:
                          EvoSci -p "…" --output-format stream-json | evosci-rx view -
  evosci-rx fake RUN|FILE [--delay MS]
                          print EVOSCI_BIN and EVOSCI_FAKE for a shell, so that an app's
                          runs replay a recording through the fake CLI instead of EvoSci:
                          eval "$(npx evosci-rx fake research --delay 40)"; node server.js
                          RUN: research, needs-input, needs-approval, resumed, failed

Options of run:
  -p, --prompt TEXT       the task (a value starting with "-": --prompt=-TEXT)
  --workdir DIR           the directory the agent works in
  --resume ID             continue a thread: the id in EvoSci's resume hint
  --no-auto-mode          stop at approvals and questions instead of answering them
  --timeout DURATION      stop the run after 90s, 30m, 2h (a bare number is seconds; 0: never)
  --record FILE           also write the events to FILE as JSONL (a FIFO: once it has a reader)
  --json                  write the events to stdout as JSONL instead of the view
  --replay FILE           play a recording instead of starting EvoSci, at the pace of the
                          elapsed_ms its events carry (examples/record-replay.ts writes it),
                          else 40 ms apart
  --speed N               replay N times as fast (default 1)
Options of both:
  --plain                 one line per finished step, even on a terminal
  -h, --help              show this help
  -V, --version           show the version

The CLI started is $EVOSCI_BIN, else EvoSci on the PATH (EvoScientist 0.2.1 or later).
Exit status: 0 completed, 1 failed or incomplete, 2 usage error, 3 needs input
(go on with --resume), 128+n stopped by signal n (130 for Ctrl-C).`;

/** A command line that does not say what to do: exit status 2, with the usage. */
export class UsageError extends Error {}

export interface RunCommand {
  readonly kind: 'run';
  readonly prompt: string;
  readonly workdir: string | undefined;
  readonly resume: string | undefined;
  readonly autoMode: boolean;
  readonly timeoutMs: number | undefined;
  /** EvoSci's own arguments, after `--`. */
  readonly args: readonly string[];
  readonly record: string | undefined;
  readonly json: boolean;
  readonly plain: boolean;
  /** A recording to replay instead of starting EvoSci, and how many times as fast. */
  readonly replay: { readonly file: string; readonly speed: number } | undefined;
}

export interface ViewCommand {
  readonly kind: 'view';
  /** A file, a FIFO, or `-` for stdin. */
  readonly file: string;
  readonly plain: boolean;
}

export interface FakeCommand {
  readonly kind: 'fake';
  /** A recorded run's name (`research`) or a transcript's path. */
  readonly transcript: string;
  /** The pause before each event, in ms. */
  readonly delayMs: number;
}

export type Command = { readonly kind: 'help' } | { readonly kind: 'version' } | RunCommand | ViewCommand | FakeCommand;

const OPTIONS = {
  prompt: { type: 'string', short: 'p' },
  workdir: { type: 'string' },
  record: { type: 'string' },
  resume: { type: 'string' },
  timeout: { type: 'string' },
  'no-auto-mode': { type: 'boolean' },
  replay: { type: 'string' },
  speed: { type: 'string' },
  delay: { type: 'string' },
  json: { type: 'boolean' },
  plain: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;
const RUN_ONLY = [
  'prompt',
  'workdir',
  'record',
  'resume',
  'timeout',
  'no-auto-mode',
  'json',
  'replay',
  'speed',
] as const;
/** What starts EvoSci, which a replay does not. */
const NOT_WITH_REPLAY = ['prompt', 'workdir', 'resume', 'timeout', 'no-auto-mode'] as const;

/** `90s`, `30m`, `2h`, `1500ms`, or seconds; 0 for no limit (`undefined`). */
function duration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match)
    throw new UsageError(`--timeout takes a duration such as 90s, 30m or 2h (0: none), not ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1000;
  const ms = Number(match[1]) * unit;
  return ms === 0 ? undefined : ms;
}

/** `--speed`: a number of times as fast, above 0. */
function speed(text: string | undefined): number {
  const value = text === undefined ? 1 : Number(text);
  if (text?.trim() === '' || !(Number.isFinite(value) && value > 0)) {
    throw new UsageError(`--speed takes a number above 0, such as 2 or 0.5, not ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * Options that no negative number suits (no duration or speed is negative):
 * such a value is read as theirs, so that the command line says first
 * whether the option applies, then what it takes.
 */
const NEVER_DASHED = new Set(['--timeout', '--speed', '--delay']);

/** `parseArgs` of `argv`, its errors as usage errors in the command's words. */
function parsedArgs(
  argv: readonly string[],
): ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; tokens: true }>> {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, tokens: true });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const refusal = refusalOf(argv);
      // Once: what is still refused after the rewrite is a missing value (another option follows).
      if (refusal === 'negative value') return parsedArgs(withNegativeValues(argv)!);
      if (refusal !== undefined) throw new UsageError(refusal);
    }
    // Node's messages run over several lines; a usage error is one.
    throw new UsageError((err as Error).message.replace(/\s*\n\s*/g, ' '));
  }
}

/**
 * What `parseArgs` refused in `argv`, read from its tokens rather than its
 * English: an unknown option, an option without its value, or (`'negative
 * value'`) a negative number given to an option that takes no other.
 */
function refusalOf(argv: readonly string[]): string | undefined {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    tokens: true,
    strict: false,
  });
  for (const token of tokens) {
    if (token.kind === 'option-terminator') break;
    if (token.kind !== 'option') continue;
    const option = (OPTIONS as Record<string, { type: string }>)[token.name];
    if (option === undefined) return `unknown option ${token.rawName}; EvoSci's own options go after -- (run only)`;
    if (option.type !== 'string') continue;
    const name = `--${token.name}`;
    if (token.value === undefined) return `${name} takes a value`;
    // As parseArgs reads a value: a lone "-" is one, anything else starting with "-" looks like an option.
    if (token.inlineValue || token.value.length < 2 || !token.value.startsWith('-')) continue;
    if (!NEVER_DASHED.has(name)) return `${name} takes a value; one that starts with "-" is written ${name}=-VALUE`;
    return NEGATIVE.test(token.value) && withNegativeValues(argv) ? 'negative value' : `${name} takes a value`;
  }
  return undefined;
}

/** A negative number, with or without a unit: a value, not an option. */
const NEGATIVE = /^-[\d.]/;

/**
 * `argv` with every `--timeout -5` before any `--` written `--timeout=-5`, as
 * `parseArgs` takes it; `undefined` when there is none (a missing value
 * followed by another option, say).
 */
function withNegativeValues(argv: readonly string[]): string[] | undefined {
  const end = argv.indexOf('--') === -1 ? argv.length : argv.indexOf('--');
  const rewritten: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (i < end - 1 && NEVER_DASHED.has(argv[i]!) && value !== undefined && NEGATIVE.test(value)) {
      rewritten.push(`${argv[i]}=${value}`);
      i++;
    } else rewritten.push(argv[i]!);
  }
  return rewritten.length === argv.length ? undefined : rewritten;
}

function tokenize(argv: readonly string[]) {
  const parsed = parsedArgs(argv);
  const { values, tokens } = parsed;
  const terminator = tokens.findIndex((t) => t.kind === 'option-terminator');
  const before = tokens.filter((t, i) => t.kind === 'positional' && (terminator === -1 || i < terminator));
  const after =
    terminator === -1 ? [] : tokens.slice(terminator + 1).map((t) => (t.kind === 'positional' ? t.value : ''));
  const [command, ...rest] = before.map((t) => (t.kind === 'positional' ? t.value : ''));
  return { values, command, rest, after };
}

/** The command `argv` asks for; throws `UsageError` for anything else. */
export function parseCommand(argv: readonly string[]): Command {
  const { values, command, rest, after } = tokenize(argv);
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  if (command === undefined) throw new UsageError('no command: run, view or fake');
  if (command === 'fake') return fakeCommand(values, rest, after);
  if (command !== 'run' && command !== 'view') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  if (values.delay !== undefined) throw new UsageError('--delay is an option of fake');
  const plain = values.plain === true;
  if (command === 'view') {
    const runOnly = RUN_ONLY.find((name) => values[name] !== undefined);
    if (runOnly) throw new UsageError(`--${runOnly} is an option of run, not of view`);
    if (rest.length !== 1 || after.length > 0) throw new UsageError('view takes one FILE, or - for stdin');
    return { kind: 'view', file: rest[0]!, plain };
  }
  if (values.replay !== undefined) return replayCommand(values, after, plain);
  if (values.speed !== undefined) throw new UsageError('--speed is an option of --replay');
  if (values.prompt === undefined) throw new UsageError('run needs a prompt: -p PROMPT');
  if (values.prompt === '') throw new UsageError('the prompt is empty');
  if (rest.length > 0) throw new UsageError(`unexpected ${JSON.stringify(rest[0])}; EvoSci's own options go after --`);
  return {
    kind: 'run',
    prompt: values.prompt,
    workdir: values.workdir,
    resume: values.resume,
    autoMode: !values['no-auto-mode'],
    timeoutMs: values.timeout === undefined ? undefined : duration(values.timeout),
    args: after,
    record: values.record,
    json: values.json === true,
    plain,
    replay: undefined,
  };
}

/** `run --replay FILE`: a recording played as a live run; what starts EvoSci does not apply. */
function replayCommand(
  values: ReturnType<typeof tokenize>['values'],
  after: readonly string[],
  plain: boolean,
): RunCommand {
  const startOnly = NOT_WITH_REPLAY.find((name) => values[name] !== undefined);
  if (startOnly || after.length > 0) {
    throw new UsageError(
      `--replay plays a recording: ${startOnly ? `--${startOnly} does` : "EvoSci's own options do"} not apply`,
    );
  }
  return {
    kind: 'run',
    prompt: '',
    workdir: undefined,
    resume: undefined,
    autoMode: true,
    timeoutMs: undefined,
    args: [],
    record: values.record,
    json: values.json === true,
    plain,
    replay: { file: values.replay!, speed: speed(values.speed) },
  };
}

/** `fake RUN|FILE [--delay MS]`: the environment that points an app's runs at the fake CLI. */
function fakeCommand(values: ReturnType<typeof tokenize>['values'], rest: readonly string[], after: readonly string[]) {
  const other = (Object.keys(OPTIONS) as (keyof typeof OPTIONS)[]).find(
    (name) => name !== 'delay' && values[name] !== undefined,
  );
  if (other !== undefined) throw new UsageError(`--${other} is not an option of fake`);
  if (rest.length !== 1 || after.length > 0) throw new UsageError('fake takes one recorded run or FILE');
  const text = values.delay ?? '0';
  const delayMs = Number(text);
  if (text.trim() === '' || !(Number.isSafeInteger(delayMs) && delayMs >= 0))
    throw new UsageError(`--delay takes a whole number of milliseconds, such as 40, not ${JSON.stringify(text)}`);
  return { kind: 'fake', transcript: rest[0]!, delayMs } satisfies FakeCommand;
}
