// A hub's runs in a directory: `<id>.jsonl` holds a run's events as they
// came, `<id>.json` its status, `forgotten.runs.jsonl` the runs it forgot.
// A hub opened again on the directory serves every finished run whole,
// reports a run that was live as interrupted, and knows what it forgot.
import { createWriteStream, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLeft } from 'fp-ts/lib/Either.js';
import { catchError, EMPTY, filter, map, throwError, type Observable } from 'rxjs';
import { toJsonl } from '../events/decode/jsonl.js';
import { DecodeIssue } from '../events/errors.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { fromJsonlFile } from '../files/fromJsonlFile.js';
import type { FlowControl } from '../common/FlowControl.js';
import { RunHubError, RunInterruptedError } from './errors.js';
import { ForgottenLog } from './ForgottenLog.js';
import { REMEMBERED_FORGOTTEN } from './ForgottenRuns.js';
import { errorInfoOf } from './runEnd.js';
import {
  isHubMade,
  StoredRun,
  type EventSink,
  type ForgottenRun,
  type OpenedStore,
  type RunStore,
} from './RunStore.js';
import { RUN_ID } from './runId.js';
import type { IndexedEvent, RunStatus } from './wire.js';

/** A run's events, appended to its file as they come; `close` resolves once they are all written. */
class FileSink implements EventSink {
  private readonly stream;
  private failure: Error | undefined;
  private closed: Promise<void> | undefined;

  constructor(path: string) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (err) => (this.failure ??= err));
  }

  append(event: EvoEvent | UnknownEvent): void {
    if (this.failure === undefined) this.stream.write(toJsonl(event));
  }

  close(): Promise<void> {
    this.closed ??= new Promise((resolve, reject) => {
      this.stream.end(() => (this.failure ? reject(this.failure) : resolve()));
    });
    return this.closed;
  }
}

/** What a reader of a run whose events file is gone gets: the server lost them. */
function eventsLost(id: string, events: number): RunHubError {
  return new RunHubError(`the ${events} events of run ${id} are lost: the hub's directory no longer has them`, 500);
}

/** The length of `text` up to and with its last newline: a line cut off by a crash is not kept. */
function wholeLinesLength(bytes: Buffer): { length: number; lines: number } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1 && at < end; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return { length: end, lines };
}

export class DirStore implements RunStore {
  readonly durable = true;
  /** Each run's status writes, one after another, so that the last one written is the last one made. */
  private readonly writes = new Map<string, Promise<void>>();
  private readonly forgotten: ForgottenLog;

  constructor(
    private readonly dir: string,
    private readonly onDiagnostic: (issue: DecodeIssue) => void,
    remembered = REMEMBERED_FORGOTTEN,
  ) {
    this.forgotten = new ForgottenLog(dir, remembered, onDiagnostic);
  }

  async open(): Promise<OpenedStore> {
    await mkdir(this.dir, { recursive: true });
    const forgotten = await this.forgotten.read();
    const forgottenIds = new Set(forgotten.map((run) => run.id));
    const runs: StoredRun[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : undefined;
      if (id === undefined || !RUN_ID.test(id)) continue;
      // Forgotten, its files left by a crash before they were removed: they go now.
      if (forgottenIds.has(id)) {
        await this.removeFiles(id);
        continue;
      }
      const stored = await this.load(id, name);
      if (!stored) continue;
      const live = stored.status.state === 'queued' || stored.status.state === 'running';
      if (!live) await this.checkEvents(stored.status);
      runs.push(live ? await this.interrupted(stored) : stored);
    }
    runs.sort((a, b) =>
      a.status.createdAt < b.status.createdAt ? -1 : a.status.createdAt > b.status.createdAt ? 1 : 0,
    );
    return { runs, forgotten };
  }

  save(run: StoredRun): Promise<void> {
    const { id } = run.status;
    const write = (this.writes.get(id) ?? Promise.resolve()).then(async () => {
      const path = this.statusPath(id);
      await writeFile(`${path}.tmp`, JSON.stringify(run));
      await rename(`${path}.tmp`, path);
    });
    this.writes.set(
      id,
      write.catch(() => undefined),
    );
    return write;
  }

  events(id: string): EventSink {
    return new FileSink(this.eventsPath(id));
  }

  read({ id, events }: Pick<RunStatus, 'id' | 'events'>, after: number, flow: FlowControl | undefined) {
    return this.readFile(id, after, flow).pipe(
      // A run that never began has no file; one whose file is gone has lost what its status counts.
      catchError((err: unknown) =>
        (err as NodeJS.ErrnoException).code !== 'ENOENT'
          ? throwError(() => err)
          : events === 0
            ? EMPTY
            : throwError(() => eventsLost(id, events)),
      ),
    );
  }

  private readFile(id: string, after: number, flow: FlowControl | undefined): Observable<IndexedEvent> {
    return fromJsonlFile(this.eventsPath(id), {
      keepUnknown: true,
      flow,
      onDiagnostic: (issue) =>
        this.onDiagnostic(new DecodeIssue(issue.line, issue.raw, `${id}.jsonl: ${issue.message}`)),
    }).pipe(
      map((event, index) => ({ index, event })),
      filter(({ index }) => index > after),
    );
  }

  bytes(id: string): number {
    try {
      return statSync(this.eventsPath(id)).size;
    } catch {
      return 0;
    }
  }

  /** Records the run as forgotten before its files go: a crash between the two leaves it forgotten all the same. */
  async forget(run: ForgottenRun): Promise<void> {
    await this.writes.get(run.id);
    this.writes.delete(run.id);
    await this.forgotten.append(run);
    await this.removeFiles(run.id);
  }

  private async removeFiles(id: string): Promise<void> {
    await Promise.all([rm(this.statusPath(id), { force: true }), rm(this.eventsPath(id), { force: true })]);
  }

  /** Reports a finished run whose events file is gone: its readers will be told its events are lost. */
  private async checkEvents({ id, events }: RunStatus): Promise<void> {
    if (events === 0) return;
    try {
      await stat(this.eventsPath(id));
    } catch {
      this.onDiagnostic(
        new DecodeIssue(0, '', `${id}.jsonl is missing from ${this.dir}: the ${events} events of run ${id} are lost`),
      );
    }
  }

  /** A status file, if it holds a run of this id: anything else is reported and left alone. */
  private async load(id: string, name: string): Promise<StoredRun | undefined> {
    const text = await readFile(join(this.dir, name), 'utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const decoded = StoredRun.decode(value);
    if (!isLeft(decoded) && decoded.right.status.id === id && isHubMade({ ...decoded.right, id })) return decoded.right;
    this.onDiagnostic(new DecodeIssue(1, text, `${name} in ${this.dir} is not the status of run ${id}; skipped`));
    return undefined;
  }

  /**
   * A run that was live when its process died: its events up to the last
   * whole line, reported interrupted, and ended when its files were last
   * written (read before the cut changes them).
   */
  private async interrupted(stored: StoredRun): Promise<StoredRun> {
    const { id } = stored.status;
    const endedAt = await this.lastWritten(id);
    let events = 0;
    try {
      const whole = wholeLinesLength(await readFile(this.eventsPath(id)));
      await truncate(this.eventsPath(id), whole.length);
      events = whole.lines;
    } catch {
      await writeFile(this.eventsPath(id), '');
    }
    const error = new RunInterruptedError(`run ${id} was interrupted: the process running it stopped before it ended`);
    const status = {
      ...stored.status,
      state: 'interrupted' as const,
      events,
      endedAt,
      error: errorInfoOf(error),
    };
    const run = { ...stored, status };
    await this.save(run);
    return run;
  }

  /**
   * When the hub last wrote the run's files: its last event (the events
   * file), or its last status (started, or recorded) if later. The process
   * died after that and wrote nothing more, so that is the closest time
   * the directory knows of its end; the time of the restart is not it.
   */
  private async lastWritten(id: string): Promise<string> {
    const times = await Promise.all(
      [this.eventsPath(id), this.statusPath(id)].map((path) =>
        stat(path).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      ),
    );
    return new Date(Math.max(...times)).toISOString();
  }

  private statusPath(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  private eventsPath(id: string): string {
    return join(this.dir, `${id}.jsonl`);
  }
}
