// Who ran what in a fleet test: each execution of a run (a worker's `started`
// activity), the one whose `finished` record was stored, and what became of
// every other.
import type { StatusRecord } from '../../src/jetstream/index.js';
import type { WorkerProcess } from './workers.js';

/** One worker's start of one attempt of a run. */
export interface Execution {
  readonly worker: WorkerProcess;
  readonly runId: string;
  readonly attempt: number;
}

/**
 * What became of an execution whose end was not the stored one: `superseded`
 * (a write refused, its CLI stopped), `returned` (handed back after a failed
 * write), `killed` (died with its worker), `unfenced` (its worker reports it
 * finished: fencing failed), or `undefined` while its worker has not said.
 */
export type Fate = 'superseded' | 'returned' | 'killed' | 'unfenced' | undefined;

/** The executions of a fleet's runs, read from its workers' activity and the runs' status records. */
export class Executions {
  constructor(
    private readonly workers: readonly WorkerProcess[],
    private readonly records: readonly StatusRecord[],
  ) {}

  /** Every execution so far, in each worker's order. */
  all(): Execution[] {
    return this.workers.flatMap((worker) =>
      worker.activity
        .filter((a) => a['type'] === 'started')
        .map((a) => ({ worker, runId: a['runId'] as string, attempt: a['attempt'] as number })),
    );
  }

  /** The runs executed more than once. */
  duplicatedRuns(): string[] {
    const times = new Map<string, number>();
    for (const { runId } of this.all()) times.set(runId, (times.get(runId) ?? 0) + 1);
    return [...times].filter(([, n]) => n > 1).map(([runId]) => runId);
  }

  /** The fate of each execution whose end was not stored. */
  fates(killed: WorkerProcess): Fate[] {
    return this.all()
      .filter((execution) => !this.stored(execution))
      .map((execution) => this.fateOf(execution, killed));
  }

  /** The executions whose fate is not known yet. */
  unsettled(killed: WorkerProcess): Fate[] {
    return this.fates(killed).filter((fate) => fate === undefined);
  }

  /** Whether the run's stored end is this execution's: the same attempt, written by its worker. */
  private stored({ worker, runId, attempt }: Execution): boolean {
    return this.records.some(
      (r) =>
        r.record === 'finished' &&
        r.runId === runId &&
        r.attempt === attempt &&
        r.worker === `test-worker-${worker.pid}`,
    );
  }

  private fateOf({ worker, runId, attempt }: Execution, killed: WorkerProcess): Fate {
    const said = worker.activity.find(
      (a) =>
        a['runId'] === runId &&
        a['attempt'] === attempt &&
        ['superseded', 'returned', 'finished'].includes(a['type'] as string),
    )?.['type'];
    if (said === 'finished') return 'unfenced';
    if (said === 'superseded' || said === 'returned') return said;
    return worker === killed ? 'killed' : undefined;
  }
}
