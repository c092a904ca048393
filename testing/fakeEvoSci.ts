import { accessSync, chmodSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * One step of the fake CLI's script, run in order. A script ends when its
 * steps run out (exit status 0) or at an `exit` or `exitAsEvoSci` step.
 */
export type FakeStep =
  /**
   * Write the lines of a JSONL file, or the given lines, to stdout. Before
   * each: `delayByType[type]`, else `delayMs`. `from` skips the first lines; `count` stops early; `stamp`
   * adds `written_at` (ms since the epoch) to each event.
   */
  | ({
      /** The path of the JSONL file. */
      readonly transcript: string;
    } & Pacing)
  | ({
      /** The lines, without their newlines. */
      readonly lines: readonly string[];
    } & Pacing)
  /** Write text (for instance half a line) or raw bytes to stdout. */
  | {
      /** The text, written as is. */
      readonly stdout: string;
    }
  | {
      /** The bytes, each 0–255. */
      readonly stdoutBytes: readonly number[];
    }
  /** A `tool_result` line whose content is `bigLine` bytes, `count` times (default once). */
  | {
      /** The size of the content, in bytes. */
      readonly bigLine: number;
      /** How many such lines; default 1. */
      readonly count?: number;
    }
  /** Write a line, or this many bytes of filler lines (of blank lines with `blank`), to stderr. */
  | {
      /** The line. */
      readonly stderr: string;
    }
  | {
      /** How many bytes of filler. */
      readonly stderrBytes: number;
      /** Fill with blank lines instead. */
      readonly blank?: boolean;
    }
  /** Write the producer's resume hint for this thread id to stderr, ANSI-coloured as Rich does. */
  | {
      /** The thread id. */
      readonly resumeHint: string;
    }
  /** Pause. */
  | {
      /** How long, in milliseconds. */
      readonly sleep: number;
    }
  /** Wait until this file exists: a test's sign to go on. */
  | {
      /** The path waited for. */
      readonly waitForFile: string;
    }
  /** From now on, ignore SIGTERM. */
  | {
      /** Always `true`. */
      readonly ignoreSigterm: true;
    }
  /** In a run with `--resume`, play these steps instead of the rest of the script. */
  | {
      /** The steps of a resumed run; without `--resume` this step does nothing. */
      readonly onResume: readonly FakeStep[];
    }
  /** From now on, ignore SIGINT. */
  | {
      /** Always `true`. */
      readonly ignoreSigint: true;
    }
  /**
   * From now on, answer SIGINT as EvoSci does: after `delayMs` of clean-up,
   * print the resume hint for this thread id (if given) and exit 130.
   */
  | {
      /** How to answer it. */
      readonly handleSigint: {
        /** The thread id of the hint printed; no hint without it. */
        readonly resumeHint?: string;
        /** The clean-up's length, in milliseconds; default 0. */
        readonly delayMs?: number;
      };
    }
  /**
   * Start a child process (a tool) that runs until killed; its pid is written
   * to this file. With `inheritOutput` it holds the CLI's stdout and stderr
   * open; with `ownSession` it leaves the CLI's process group (as `setsid` does).
   */
  | {
      /** The file its pid is written to. */
      readonly grandchild: string;
      /** The child ignores SIGTERM, so only SIGKILL ends it. */
      readonly ignoreSigterm?: boolean;
      /** The child holds the CLI's stdout and stderr open. */
      readonly inheritOutput?: boolean;
      /** The child leaves the CLI's process group. */
      readonly ownSession?: boolean;
    }
  /** Close stdout and go on running. */
  | {
      /** Always `true`. */
      readonly closeStdout: true;
    }
  /** Send this signal to itself (`SIGKILL` for a crash). */
  | {
      /** The signal. */
      readonly kill: NodeJS.Signals;
    }
  /** Run until killed. */
  | {
      /** Always `true`. */
      readonly hang: true;
    }
  /** Write `{ pid, argv, cwd, stdin: 'eof' | 'open', env }` as JSON to this file; with `append`, as one more line of it. */
  | {
      /** The file written. */
      readonly record: string;
      /** Add a line to the file instead of replacing it. */
      readonly append?: boolean;
    }
  /** Stop the script and exit. */
  | {
      /** The exit code. */
      readonly exit: number;
    }
  /** Exit as EvoSci does after what the transcripts wrote: 0 after a `done` line, 1 without (an exception). */
  | {
      /** Always `true`. */
      readonly exitAsEvoSci: true;
    };

/** How a `transcript` or `lines` step of `fakeEvoSci` writes its lines. */
export interface Pacing {
  /** Lines to skip first. */
  readonly from?: number;
  /** Milliseconds to wait before each line. */
  readonly delayMs?: number;
  /** Milliseconds to wait before a line of that event `type`, instead of `delayMs`. */
  readonly delayByType?: Readonly<Record<string, number>>;
  /** Lines to write at most. */
  readonly count?: number;
  /** Add `written_at` (milliseconds since the epoch) to each event. */
  readonly stamp?: boolean;
}

/** The build copies the script beside this module, so the same path holds in the source tree and the package. */
const FAKE_CLI = fileURLToPath(new URL('./fake-evosci.mjs', import.meta.url));

/**
 * `command` and `env` for `run()` that start a fake EvoSci, a real child
 * process replaying `steps`: transcripts, stderr, pauses, crashes, signals.
 *
 * ```ts
 * run({ prompt: 'x', ...fakeEvoSci([{ transcript: 'run.jsonl', delayMs: 5 }, { resumeHint: 't-1' }]) })
 * ```
 */
export function fakeEvoSci(steps: readonly FakeStep[]): {
  /** The fake CLI's path, for `RunOptions.command`. */
  command: string;
  /** The variables that carry `steps` to it, for `RunOptions.env`. */
  env: Record<string, string>;
} {
  try {
    accessSync(FAKE_CLI, constants.X_OK);
  } catch {
    // npm does not keep the executable bit of files outside `bin`.
    chmodSync(FAKE_CLI, 0o755);
  }
  return { command: FAKE_CLI, env: { EVOSCI_FAKE: JSON.stringify({ steps }) } };
}
