import { defer, type Observable } from 'rxjs';
import type { DecodeIssue } from '../events/errors.js';
import { DirStore } from './DirStore.js';
import { ForgottenRuns } from './ForgottenRuns.js';
import {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  IdempotencyKeyReusedError,
  UnknownRunError,
} from './errors.js';
import { LocalRun, type RunHooks } from './LocalRun.js';
import { KeptReadings } from './KeptReadings.js';
import { SHARED_READ_BYTES } from './SharedReadings.js';
import { memoryStore } from './MemoryStore.js';
import {
  allowedFields,
  checkIdempotencyKey,
  checkStartRequest,
  fingerprintOf,
  policyRunOptions,
  type RunPolicy,
} from './policy.js';
import type { RequestField } from '../process/requestedOptions.js';
import type { FollowOptions, RunHub, StartedRun, StartOptions } from './RunHub.js';
import { newRunId, RUN_ID } from './runId.js';
import type { ForgottenRun, OpenedStore, RunStore, StoredRun } from './RunStore.js';
import type { IndexedEvent, RunStatus, StartRequest } from './wire.js';
import { wholeAtLeast } from '../common/checks.js';

/** Options of `runHub`. */
export interface RunHubOptions extends RunPolicy {
  /**
   * A directory that keeps each run (`<id>.jsonl` and `<id>.json`) and the
   * runs forgotten (`forgotten.runs.jsonl`) across restarts. Default: memory only.
   */
  readonly dir?: string | undefined;
  /** Runs whose process is alive at once; one more start is refused with `HubFullError`. Default 4. */
  readonly maxLive?: number | undefined;
  /** Finished runs kept, the oldest forgotten first. Default 100. */
  readonly keepFinished?: number | undefined;
  /** Bytes of JSONL kept for finished runs together (in memory, or in `dir`), the oldest forgotten first. Default 256 MiB. */
  readonly keepBytes?: number | undefined;
  /** A file of `dir` that is not what the hub wrote (a status it cannot read, a line of events that does not decode). */
  readonly onDiagnostic?: ((issue: DecodeIssue) => void) | undefined;
  /** `dir` could not take a run's events or status (the disk is full): the run's events stay in memory. Default: a process warning. */
  readonly onStoreError?: ((error: unknown, id: string) => void) | undefined;
}

function limit(name: string, value: number | undefined, fallback: number): number {
  return wholeAtLeast('runHub', name, value ?? fallback, 1);
}

/**
 * A hub of runs in this process. Each run is one `run()` subscription, its
 * events in one log that every reader reads from its own place, in memory or
 * in `dir`. Starts are refused past `maxLive`; the oldest finished runs are
 * forgotten past `keepFinished` or `keepBytes`.
 *
 * ```ts
 * const hub = await runHub({ dir: './runs', runOptions: { workdir: './task' } });
 * const { id } = await hub.start({ prompt: 'Survey sparse attention' }, { idempotencyKey });
 * hub.follow(id, { after: 4 }).subscribe(({ index, event }) => console.log(index, event.type));
 * ```
 */
export async function runHub(options: RunHubOptions = {}): Promise<RunHub> {
  const onDiagnostic = options.onDiagnostic ?? (() => undefined);
  const store = options.dir === undefined ? memoryStore : new DirStore(options.dir, onDiagnostic);
  return runHubOn(store, options);
}

/** `runHub` on a store given, `dir` aside: how a test stands between the hub and its store. */
export async function runHubOn(store: RunStore, options: RunHubOptions = {}): Promise<RunHub> {
  const hub = new LocalRunHub(options, store);
  hub.adopt(await store.open());
  return hub;
}

/** The state of `runHub`: the runs it holds by id (oldest first), the keys that started them, what it forgot. */
class LocalRunHub implements RunHub {
  private readonly runs = new Map<string, LocalRun>();
  private readonly keys = new Map<string, { readonly id: string; readonly fingerprint: string | undefined }>();
  /** Its forgotten runs, whose ids answer 410 and whose keys start nothing. */
  private readonly forgotten = new ForgottenRuns();
  /** Forgotten runs being removed from the store: `close` waits for them. */
  private readonly removals = new Set<Promise<void>>();
  private readonly allowed: readonly RequestField[];
  private readonly maxLive: number;
  private readonly keepFinished: number;
  private readonly keepBytes: number;
  private readonly hooks: RunHooks;
  /** The readings of its runs that ended, kept a while for the readers who come after: one bound for all its runs. */
  private readonly kept = new KeptReadings(SHARED_READ_BYTES);
  private closed = false;

  constructor(
    private readonly options: RunHubOptions,
    private readonly store: RunStore,
  ) {
    this.allowed = allowedFields(options.allowFromRequest);
    this.maxLive = limit('maxLive', options.maxLive, 4);
    this.keepFinished = limit('keepFinished', options.keepFinished, 100);
    this.keepBytes = limit('keepBytes', options.keepBytes, 256 * 1024 * 1024);
    this.hooks = {
      onSettled: () => this.forgetOld(),
      onStoreError: options.onStoreError ?? ((error, id) => process.emitWarning(`run ${id}: ${String(error)}`)),
    };
  }

  /** What a store held when the hub opened. */
  adopt(found: OpenedStore): void {
    for (const run of found.forgotten) this.forgotten.add(run);
    for (const stored of found.runs) this.hold(LocalRun.stored(stored, this.store, this.hooks, this.kept), stored);
    this.forgetOld();
  }

  async start(request: StartRequest, options: StartOptions = {}): Promise<StartedRun> {
    if (this.closed) throw new HubClosedError();
    const checked = checkStartRequest(request);
    const key = options.idempotencyKey;
    checkIdempotencyKey(key);
    const fingerprint = fingerprintOf(checked);
    const repeated = key === undefined ? undefined : (this.keys.get(key) ?? this.forgotten.withKey(key));
    if (repeated) {
      if (repeated.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError(repeated.id);
      return { id: repeated.id, created: false };
    }
    const alive = [...this.runs.values()].filter((r) => !r.settled).length;
    if (alive >= this.maxLive) throw new HubFullError(this.maxLive);
    const id = newRunId();
    const runOptions = policyRunOptions(this.options, this.allowed, checked, id);
    const stored = this.newRecord(id, checked, key, fingerprint);
    // Held before the first await: a repeat of the key, or one start too many, is refused meanwhile.
    const live = LocalRun.prepare(stored, this.store, this.hooks, runOptions, this.kept);
    this.hold(live, stored);
    try {
      await live.record();
    } catch (err) {
      this.runs.delete(id);
      if (key !== undefined) this.keys.delete(key);
      throw err;
    }
    // A cancel or close that came while it was saved has ended it: it does not start.
    live.begin();
    return { id, created: true };
  }

  follow(id: string, options: FollowOptions = {}): Observable<IndexedEvent> {
    return defer(() => {
      const after = options.after ?? -1;
      if (!(Number.isSafeInteger(after) && after >= -1))
        throw new TypeError(`follow: after must be the index of an event (≥ -1), got ${String(after)}`);
      return this.lookup(id).follow(after, options.flow);
    });
  }

  status(id: string): Promise<RunStatus> {
    return new Promise((resolve) => resolve(this.lookup(id).status));
  }

  list(): Promise<readonly RunStatus[]> {
    return Promise.resolve([...this.runs.values()].map((r) => r.status));
  }

  async cancel(id: string): Promise<RunStatus> {
    return this.lookup(id).cancel();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.runs.values()].map((r) => r.interrupt()));
    await Promise.all(this.removals);
    this.kept.clear();
  }

  private newRecord(id: string, request: StartRequest, key: string | undefined, fingerprint: string): StoredRun {
    const status: RunStatus = {
      id,
      state: 'running',
      prompt: request.prompt,
      createdAt: new Date().toISOString(),
      events: 0,
      // A run that resumes a thread goes on in it: its thread id is known from the start.
      ...(request.resume !== undefined && { resumed: request.resume, threadId: request.resume }),
      ...(request.metadata !== undefined && { metadata: request.metadata }),
    };
    return { status, fingerprint, ...(key !== undefined && { idempotencyKey: key }) };
  }

  private hold(live: LocalRun, stored: StoredRun): void {
    this.runs.set(live.id, live);
    if (stored.idempotencyKey !== undefined)
      this.keys.set(stored.idempotencyKey, { id: live.id, fingerprint: stored.fingerprint });
  }

  private lookup(id: string): LocalRun {
    const found = RUN_ID.test(id) ? this.runs.get(id) : undefined;
    if (found) return found;
    throw this.forgotten.has(id) ? new ForgottenRunError(id) : new UnknownRunError(id);
  }

  /** Forgets the oldest finished runs while too many are kept or their events hold too many bytes. */
  private forgetOld(): void {
    const finished = [...this.runs.values()].filter((r) => r.settled);
    let bytes = finished.reduce((sum, r) => sum + r.bytes, 0);
    for (const [i, old] of finished.entries()) {
      if (finished.length - i <= this.keepFinished && bytes <= this.keepBytes) break;
      bytes -= old.bytes;
      this.forget(old);
    }
  }

  private forget(old: LocalRun): void {
    const { idempotencyKey, fingerprint } = old.key;
    const run: ForgottenRun = {
      id: old.id,
      ...(idempotencyKey !== undefined && { idempotencyKey }),
      ...(fingerprint !== undefined && { fingerprint }),
    };
    this.runs.delete(old.id);
    if (idempotencyKey !== undefined) this.keys.delete(idempotencyKey);
    // The key still names the run: a late retry hears of it (and 410 on reading), never starts another.
    this.forgotten.add(run);
    const removal = this.store
      .forget(run)
      .catch((err: unknown) => this.hooks.onStoreError(err, old.id))
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }
}
