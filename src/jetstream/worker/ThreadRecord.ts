// The thread id of one attempt, stored once it is known: EvoSci reports it
// on stderr only as it exits, which after `done` is after the attempt's
// `finished` record was stored.
import type { NatsConnection } from '@nats-io/transport-node';
import { publishStored } from '../write/publishStored.js';
import { encodeRecord, RunHeaders, type FinishedRecord } from '../wire/records.js';
import { readStatus } from '../read/status.js';
import type { WorkerSettings } from './workerTypes.js';

/**
 * Where an attempt's thread id goes once its CLI exited: into its `finished`
 * record if the exit came first (its error carries it), else into the same
 * record stored again with `threadId`, on condition that it is still the
 * run's last status record. Best effort: a worker stopped, a broker gone or
 * a status moved on leave the run as it was stored at `done`.
 */
export class ThreadRecord {
  private threadId: string | undefined;
  private recorded: FinishedRecord | undefined;
  private storing = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: Pick<WorkerSettings, 'layout' | 'timing'>,
    private readonly runId: string,
  ) {}

  /** The CLI exited, reporting this thread (or none). */
  exited(threadId: string | undefined): void {
    this.threadId = threadId;
    this.storeIfMissing();
  }

  /** The attempt's `finished` record is stored. */
  finished(record: FinishedRecord): void {
    this.recorded = record;
    this.storeIfMissing();
  }

  private storeIfMissing(): void {
    const { threadId, recorded } = this;
    if (this.storing || threadId === undefined || recorded === undefined) return;
    if (recorded.threadId === threadId || recorded.error?.threadId === threadId) return;
    this.storing = true;
    // A status moved on (another attempt, a record of another writer), a broker gone: the end stays as stored.
    this.store(recorded, threadId).catch(() => undefined);
  }

  private async store(recorded: FinishedRecord, threadId: string): Promise<void> {
    const { layout, timing } = this.settings;
    const status = await readStatus(this.nc, layout, this.runId);
    const last = status?.record;
    // Only over the attempt's own end, as stored: never over a later attempt or a record of another writer.
    if (last?.record !== 'finished' || last.attempt !== recorded.attempt || last.at !== recorded.at) return;
    const attempt = String(recorded.attempt);
    await publishStored(
      this.nc,
      {
        subject: layout.statusSubject(this.runId),
        msgID: `${this.runId}.${attempt}.finished.thread`,
        headers: { [RunHeaders.runId]: this.runId, [RunHeaders.attempt]: attempt, [RunHeaders.record]: 'finished' },
        expectLastSequence: status!.sequence,
      },
      encodeRecord({ ...last, threadId }),
      timing,
    );
  }
}
