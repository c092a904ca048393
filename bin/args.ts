// The command line of `evosci-rx`: its usage, and the one command it asks for, checked.
import { parseArgs } from 'node:util';

export const USAGE = `Usage:
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
  --record FILE           also write the events to FILE as JSONL (a FIFO: once it has a reader)
  --json                  write the events to stdout as JSONL instead of the view
Options of both:
  --plain                 one line per finished step, even on a terminal
  -h, --help              show this help
  -V, --version           show the version

The CLI started is $EVOSCI_BIN, else EvoSci on the PATH (EvoScientist 0.2.1 or later).
Exit status: 0 completed, 1 failed or incomplete, 2 usage error, 3 needs input
(answer with --resume), 128+n stopped by signal n (130 for Ctrl-C).`;

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
}

export interface ViewCommand {
  readonly kind: 'view';
  /** A file, a FIFO, or `-` for stdin. */
  readonly file: string;
  readonly plain: boolean;
}

export type Command = { readonly kind: 'help' } | { readonly kind: 'version' } | RunCommand | ViewCommand;

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
const RUN_ONLY = ['prompt', 'workdir', 'record', 'resume', 'timeout', 'no-auto-mode', 'json'] as const;

/** `90s`, `30m`, `2h`, `1500ms`, or seconds. */
function duration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--timeout takes a duration such as 90s, 30m or 2h, not ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1000;
  return Number(match[1]) * unit;
}

function tokenize(argv: readonly string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, tokens: true });
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

/** The command `argv` asks for; throws `UsageError` for anything else. */
export function parseCommand(argv: readonly string[]): Command {
  const { values, command, rest, after } = tokenize(argv);
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  if (command === undefined) throw new UsageError('no command: run or view');
  if (command !== 'run' && command !== 'view') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const plain = values.plain === true;
  if (command === 'view') {
    const runOnly = RUN_ONLY.find((name) => values[name] !== undefined);
    if (runOnly) throw new UsageError(`--${runOnly} is an option of run, not of view`);
    if (rest.length !== 1 || after.length > 0) throw new UsageError('view takes one FILE, or - for stdin');
    return { kind: 'view', file: rest[0]!, plain };
  }
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
  };
}
