// The runs a hub in a directory forgot, one JSON line each, so that their
// ids still answer 410 and their keys start nothing after a restart.
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLeft } from 'fp-ts/lib/Either.js';
import { DecodeIssue } from '../events/errors.js';
import { ForgottenRun, isHubMade } from './RunStore.js';

/** Its name in the directory: with a `.` in it, no run's file can be named so. */
export const FORGOTTEN_FILE = 'forgotten.runs.jsonl';

/** The run on a line, with only its own fields, if a hub made it. */
function runOfLine(line: string): ForgottenRun | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const decoded = ForgottenRun.decode(value);
  if (isLeft(decoded) || !isHubMade(decoded.right)) return undefined;
  const { id, idempotencyKey, fingerprint } = decoded.right;
  return {
    id,
    ...(idempotencyKey !== undefined && { idempotencyKey }),
    ...(fingerprint !== undefined && { fingerprint }),
  };
}

/** What the file holds: its latest runs, and whether it holds anything else (lines past them, or that are none). */
interface Loaded {
  readonly runs: ForgottenRun[];
  readonly untidy: boolean;
}

/**
 * The file of a directory's forgotten runs, appended to as runs are
 * forgotten and read when the hub opens. It keeps the latest `capacity`
 * runs: past twice as many lines, or with a line that is not a run (cut off
 * by a crash, written by hand), it is rewritten with just them.
 */
export class ForgottenLog {
  private readonly path: string;
  /** Lines in the file, as far as this hub knows. */
  private lines = 0;
  /** Appends and rewrites, one after another. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly capacity: number,
    private readonly onDiagnostic: (issue: DecodeIssue) => void,
  ) {
    this.path = join(dir, FORGOTTEN_FILE);
  }

  /** The latest runs of the file, oldest first; a line that is not one is reported and dropped. */
  async read(): Promise<ForgottenRun[]> {
    const { runs, untidy } = await this.load();
    if (untidy) await this.rewrite(runs);
    this.lines = runs.length;
    return runs;
  }

  /** Resolves once `run` is in the file. */
  append(run: ForgottenRun): Promise<void> {
    const write = this.writes.then(async () => {
      if (this.lines >= 2 * this.capacity) await this.read();
      this.lines++;
      await appendFile(this.path, `${JSON.stringify(run)}\n`);
    });
    // An append that failed may have left part of a line: the next one rewrites the file first, without it.
    this.writes = write.catch(() => {
      this.lines = 2 * this.capacity;
    });
    return write;
  }

  private async load(): Promise<Loaded> {
    let text = '';
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const lines = text.split('\n');
    // Not ending with a newline, it ends with a line a crash cut off, or one the next append would join.
    const whole = lines.at(-1) === '';
    if (whole) lines.pop();
    const latest = new Map<string, ForgottenRun>();
    for (const [i, line] of lines.entries()) {
      const run = runOfLine(line);
      if (run === undefined) {
        this.report(i + 1, line);
        continue;
      }
      latest.delete(run.id);
      latest.set(run.id, run);
    }
    const runs = [...latest.values()].slice(-this.capacity);
    const untidy = !whole || runs.length !== lines.length;
    return { runs, untidy };
  }

  private report(line: number, raw: string): void {
    const message = `${FORGOTTEN_FILE} in ${this.dir}: line ${line} is not a forgotten run; dropped`;
    this.onDiagnostic(new DecodeIssue(line, raw, message));
  }

  private async rewrite(runs: readonly ForgottenRun[]): Promise<void> {
    await writeFile(`${this.path}.tmp`, runs.map((run) => `${JSON.stringify(run)}\n`).join(''));
    await rename(`${this.path}.tmp`, this.path);
  }
}
