import { randomUUID } from 'node:crypto';
import { cancelPhaseOf } from '../wire/cancelRequest.js';
import type { JetStreamLayout } from '../wire/layout.js';
import { partHeader, type Part } from '../wire/parts.js';
import type { PublishTarget } from './publishStored.js';
import { RunHeaders, serializeError, type FinishedRecord, type StartedRecord } from '../wire/records.js';

/** The attempt a writer writes, as its messages name it. */
export interface AttemptIdentity {
  readonly layout: JetStreamLayout;
  readonly runId: string;
  readonly attempt: number;
  readonly worker: string | undefined;
  readonly prompt: string | undefined;
  readonly requestSequence: number | undefined;
}

/** How an attempt ended, for its `finished` record. */
export interface Ending {
  readonly error?: unknown;
  readonly failed: boolean;
}

/**
 * The messages of one writer of one attempt: where each event (or part of
 * one) and each status record goes, with its headers and `Nats-Msg-Id`, and
 * the records themselves.
 */
export class AttemptMessages {
  /**
   * This writer's part of its status records' `Nats-Msg-Id`. The stream
   * answers a repeated id as a duplicate before it checks the condition: two
   * writers of one attempt (a worker held past the ack wait, and the one given
   * the request meanwhile) sharing an id would each take the other's record
   * for their own, and both write the run. Ids of their own make the
   * condition refuse the later writer; a retry of one writer is still dropped.
   */
  private readonly writerId = randomUUID();
  /** Headers every message of the attempt carries, made once. */
  private readonly common: Readonly<Record<string, string>>;
  private readonly eventSubject: string;

  constructor(private readonly attempt: AttemptIdentity) {
    this.common = { [RunHeaders.runId]: attempt.runId, [RunHeaders.attempt]: String(attempt.attempt) };
    this.eventSubject = attempt.layout.attemptSubject(attempt.runId, attempt.attempt);
  }

  /** Where event `sequence` (or one part of it) is stored, and its id: `<runId>.<attempt>.<seq>`, `.<part>` for a part. */
  event(sequence: number, part: Part | undefined): PublishTarget {
    const id = `${this.attempt.runId}.${this.attempt.attempt}.${sequence}`;
    const headers: Record<string, string> = { ...this.common, [RunHeaders.sequence]: String(sequence) };
    if (part === undefined) return { subject: this.eventSubject, msgID: id, headers };
    headers[RunHeaders.part] = partHeader(part);
    return { subject: this.eventSubject, msgID: `${id}.${part.index}`, headers };
  }

  /**
   * Where a status record is stored, conditional on `expectLastSequence`;
   * `idSuffix` makes a second record of the same kind from this writer a message of its own.
   */
  status(kind: 'started' | 'finished', expectLastSequence: number | undefined, idSuffix = ''): PublishTarget {
    const { layout, runId, attempt } = this.attempt;
    return {
      subject: layout.statusSubject(runId),
      msgID: `${runId}.${attempt}.${kind}.${this.writerId}${idSuffix}`,
      headers: { ...this.common, [RunHeaders.record]: kind },
      ...(expectLastSequence === undefined ? {} : { expectLastSequence }),
    };
  }

  started(): StartedRecord {
    const { runId, attempt, worker, prompt, requestSequence } = this.attempt;
    return {
      record: 'started',
      runId,
      attempt,
      at: new Date().toISOString(),
      ...(worker === undefined ? {} : { worker }),
      ...(prompt === undefined ? {} : { prompt }),
      ...(requestSequence === undefined ? {} : { request: requestSequence }),
    };
  }

  finished(ending: Ending, events: number, startSequence: number | undefined): FinishedRecord {
    const { runId, attempt, worker } = this.attempt;
    return {
      record: 'finished',
      runId,
      attempt,
      at: new Date().toISOString(),
      events,
      startSequence: startSequence ?? 0,
      outcome: ending.failed ? 'failed' : 'completed',
      ...(ending.failed ? { error: serializeError(ending.error) } : {}),
      ...(worker === undefined ? {} : { worker }),
      ...cancelledField(ending),
    };
  }
}

/** `cancelled` for the record of a run that `cancelRun` stopped: what it stopped. */
function cancelledField(ending: Ending): Pick<FinishedRecord, 'cancelled'> {
  const phase = ending.failed ? cancelPhaseOf(ending.error) : undefined;
  return phase === undefined ? {} : { cancelled: phase };
}
