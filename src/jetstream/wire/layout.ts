/** Where runs live in JetStream: every name derives from one prefix, so that deployments (and tests) never collide. */
export interface LayoutOptions {
  /** The first token of every subject, and (upper-cased) the start of the stream names. Default `evosci`. */
  readonly prefix?: string;
}

/**
 * The subjects, streams and consumer of one deployment.
 *
 * ```
 * EVOSCI_EVENTS   (limits, file,   evosci.run.<runId>.<attempt>   the events of one attempt, in order (a large one in parts)
 *                  discard new)
 *                                  evosci.run.<runId>.status      started / finished / dead-letter records
 *                                  evosci.run.<runId>.cancel      a cancel asked of the run (`cancelRun`)
 *                                  evosci.run.<runId>.submitted   the run as a hub took it (`jetStreamRunHub`)
 * EVOSCI_REQUESTS (work queue)     evosci.requests                run requests, taken by the durable `evosci-workers`
 * EVOSCI_HUB      (limits)         evosci.hub.secret              the secret hubs make keyed run ids with, out of submitters' reach
 * ```
 */
export interface JetStreamLayout {
  /** The prefix every name derives from (default `evosci`). */
  readonly prefix: string;
  /** The stream of runs: their events and status records (`EVOSCI_EVENTS`). */
  readonly eventsStream: string;
  /** The work queue of run requests (`EVOSCI_REQUESTS`). */
  readonly requestsStream: string;
  /** What hubs keep for themselves, in a stream of its own: submitters, who read every run, have no rights on it. */
  readonly hubStream: string;
  /** The durable pull consumer the workers share. */
  readonly workersConsumer: string;
  /** The subject run requests are published on (`evosci.requests`). */
  readonly requestsSubject: string;
  /** Every subject of the events stream. */
  readonly runsSubjects: string;
  /** Every subject of the hub stream. */
  readonly hubSubjects: string;
  /** The secret every hub of the prefix mixes into keyed run ids, unless given its own. */
  readonly secretSubject: string;
  /** The events of one attempt of a run. */
  attemptSubject(runId: string, attempt: number): string;
  /** The status records of a run. */
  statusSubject(runId: string): string;
  /** Where `cancelRun` stores a cancel of a run; a submitter's only write besides requests. */
  cancelSubject(runId: string): string;
  /** Where `jetStreamRunHub` stores a run it took, before any worker has it. */
  submittedSubject(runId: string): string;
  /** Everything of one run: its status records, its cancel and every attempt's events. */
  runSubjects(runId: string): string;
  /** The status records of every run. */
  readonly allStatusSubjects: string;
  /** The cancels of every run, which workers subscribe to. */
  readonly allCancelSubjects: string;
  /** The submitted records of every run. */
  readonly allSubmittedSubjects: string;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;
const MAX_RUN_ID = 128;

/** The names of streams, subjects and the workers' consumer under a prefix; a prefix that is not subject tokens is a `TypeError`. */
export function layoutOf(options: LayoutOptions = {}): JetStreamLayout {
  const prefix = options.prefix ?? 'evosci';
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix)) {
    throw new TypeError(
      `prefix must be subject tokens of letters, digits, "_" or "-" joined by ".", got ${JSON.stringify(prefix)}`,
    );
  }
  const streamBase = prefix.toUpperCase().replace(/[^A-Z0-9_-]/g, '_');
  return {
    prefix,
    eventsStream: `${streamBase}_EVENTS`,
    requestsStream: `${streamBase}_REQUESTS`,
    hubStream: `${streamBase}_HUB`,
    workersConsumer: `${streamBase.toLowerCase()}-workers`,
    requestsSubject: `${prefix}.requests`,
    runsSubjects: `${prefix}.run.>`,
    hubSubjects: `${prefix}.hub.>`,
    secretSubject: `${prefix}.hub.secret`,
    attemptSubject: (runId, attempt) => `${prefix}.run.${runId}.${attempt}`,
    statusSubject: (runId) => `${prefix}.run.${runId}.status`,
    cancelSubject: (runId) => `${prefix}.run.${runId}.cancel`,
    submittedSubject: (runId) => `${prefix}.run.${runId}.submitted`,
    runSubjects: (runId) => `${prefix}.run.${runId}.>`,
    allStatusSubjects: `${prefix}.run.*.status`,
    allCancelSubjects: `${prefix}.run.*.cancel`,
    allSubmittedSubjects: `${prefix}.run.*.submitted`,
  };
}

/** A run id is one subject token: letters, digits, `_` and `-`, at most 128 characters. */
export function checkRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || !TOKEN.test(runId) || runId.length > MAX_RUN_ID) {
    throw new TypeError(`run id must be 1 to ${MAX_RUN_ID} letters, digits, "_" or "-", got ${JSON.stringify(runId)}`);
  }
}

/** An attempt is a positive integer. */
export function checkAttempt(attempt: unknown): asserts attempt is number {
  if (!(typeof attempt === 'number' && Number.isInteger(attempt) && attempt >= 1)) {
    throw new TypeError(`attempt must be an integer ≥ 1, got ${String(attempt)}`);
  }
}
