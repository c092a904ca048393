import type { NatsConnection } from '@nats-io/transport-node';
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { DEFAULTS, nanos } from './wire/defaults.js';
import { BrokerError, brokerError, isNotFound } from './wire/errors.js';
import { layoutOf, type JetStreamLayout, type LayoutOptions } from './wire/layout.js';
import { clientsOf } from './wire/clients.js';

/** Options of `ensureStreams`; every one has a default fit for one server. */
export interface EnsureStreamsOptions extends LayoutOptions {
  /**
   * How long events and status records are kept. Default 7 days. A run may
   * not last longer: `publishTo` stops it with a `StorageLimitError` before
   * the stream would remove its `started` record.
   */
  readonly eventsMaxAgeMs?: number;
  /** How long a request may wait for a worker. Default 0: until taken. */
  readonly requestsMaxAgeMs?: number;
  /**
   * Largest the events stream may grow, in bytes. Default -1: no limit. Full,
   * it refuses new messages (`discard: new`) rather than remove stored ones:
   * a run in progress is never removed by the growth of others, and one that
   * meets the full stream fails with a `StorageLimitError` naming the limit.
   * Room comes back as runs pass `eventsMaxAgeMs`.
   */
  readonly eventsMaxBytes?: number;
  /** `file` (default: survives a broker restart) or `memory`. */
  readonly storage?: 'file' | 'memory';
  /**
   * Copies of each stream, each on its own server of a cluster. A new stream
   * has 1 unless given; an existing stream keeps its own unless given, so
   * that a process started without it never lowers a replicated stream. On a
   * cluster use 3 (writes and reads go on with one server down) or 5 (with
   * two down); a majority of the copies must be up for the stream to take a
   * write. 1 survives no server loss.
   */
  readonly replicas?: number;
  /** How long a `Nats-Msg-Id` is remembered for de-duplication. Default 2 minutes. */
  readonly duplicateWindowMs?: number;
}

/** The stream configurations `ensureStreams` writes, by stream. */
export function streamConfigs(options: EnsureStreamsOptions = {}): {
  /** The names and subjects the options give. */
  layout: JetStreamLayout;
  /** The stream of runs' events and status records. */
  events: StreamConfig;
  /** The work queue of run requests. */
  requests: StreamConfig;
  /** The hubs' own stream, kept for good. */
  hub: StreamConfig;
} {
  const layout = layoutOf(options);
  const storage = (options.storage ?? 'file') === 'file' ? StorageType.File : StorageType.Memory;
  const eventsMaxAgeMs = options.eventsMaxAgeMs ?? DEFAULTS.eventsMaxAgeMs;
  const requestsMaxAgeMs = options.requestsMaxAgeMs ?? 0;
  const duplicateWindowMs = options.duplicateWindowMs ?? DEFAULTS.duplicateWindowMs;
  // JetStream refuses a duplicate window longer than the stream keeps messages.
  const window = (maxAgeMs: number) => nanos(maxAgeMs > 0 ? Math.min(duplicateWindowMs, maxAgeMs) : duplicateWindowMs);
  const common = {
    storage,
    num_replicas: options.replicas ?? 1,
    discard: DiscardPolicy.Old,
  };
  const events = {
    ...common,
    duplicate_window: window(eventsMaxAgeMs),
    name: layout.eventsStream,
    subjects: [layout.runsSubjects],
    retention: RetentionPolicy.Limits,
    max_age: nanos(eventsMaxAgeMs),
    max_bytes: options.eventsMaxBytes ?? -1,
    // Full, the stream refuses what comes rather than drop the oldest: the oldest may be a run in progress.
    discard: DiscardPolicy.New,
  } as StreamConfig;
  const requests = {
    ...common,
    name: layout.requestsStream,
    subjects: [layout.requestsSubject],
    retention: RetentionPolicy.Workqueue,
    duplicate_window: window(requestsMaxAgeMs),
    max_age: nanos(requestsMaxAgeMs),
  } as StreamConfig;
  // Kept for good: a secret that changed would give every key a new run id.
  const hub = {
    ...common,
    name: layout.hubStream,
    subjects: [layout.hubSubjects],
    retention: RetentionPolicy.Limits,
    duplicate_window: window(0),
    max_age: 0,
  } as StreamConfig;
  return { layout, events, requests, hub };
}

/** One setting `ensureStreams` changed on an existing stream: its value before and after. */
export interface StreamChange {
  /** The stream changed. */
  readonly stream: string;
  /** The setting changed, as JetStream names it (`num_replicas`, `max_age`…). */
  readonly field: ChangedField;
  /** Its value before. */
  readonly from: unknown;
  /** Its value now. */
  readonly to: unknown;
}

/** A setting of an existing stream whose change `ensureStreams` reports. */
export type ChangedField = 'num_replicas' | 'max_age' | 'max_bytes' | 'discard' | 'duplicate_window';

/** The settings whose change is reported, in the order reported. */
const REPORTED_FIELDS: readonly ChangedField[] = [
  'num_replicas',
  'max_age',
  'max_bytes',
  'discard',
  'duplicate_window',
];

/** What `ensureStreams` resolves with: the layout, and what it changed on streams that existed. */
export interface EnsuredStreams extends JetStreamLayout {
  /** Each setting it changed on an existing stream, in order; empty when nothing was changed. */
  readonly changes: readonly StreamChange[];
}

/**
 * Creates the streams runs need (events, requests, and the hubs' own), or updates them to these options; safe
 * to call from every process at start-up. A stream whose retention differs
 * (which JetStream cannot change) or whose subjects another stream holds is
 * an error naming it, and so is a stream of another prefix that maps to the
 * same stream names (`x.team` and `x_team`, `Evosci` and `evosci`): its
 * subjects are never rewritten. An existing stream keeps its replicas unless
 * `replicas` is given; every setting it changed on a stream that existed is
 * in `changes` (`{ stream: 'EVOSCI_EVENTS', field: 'num_replicas', from: 3, to: 1 }`),
 * for the caller to log.
 *
 * ```ts
 * const nc = await connect({ servers: '127.0.0.1:4222' });
 * const { eventsStream, requestsStream } = await ensureStreams(nc); // EVOSCI_EVENTS, EVOSCI_REQUESTS (and EVOSCI_HUB)
 * const { changes } = await ensureStreams(nc, { replicas: 3 }); // on a cluster
 * for (const c of changes) console.log(`${c.stream}: ${c.field} ${c.from} -> ${c.to}`);
 * ```
 */
export async function ensureStreams(nc: NatsConnection, options: EnsureStreamsOptions = {}): Promise<EnsuredStreams> {
  const { layout, events, requests, hub } = streamConfigs(options);
  const jsm = await clientsOf(nc).manager();
  const changes: StreamChange[] = [];
  for (const given of [events, requests, hub]) {
    let config = given;
    let existing: StreamInfo | undefined;
    try {
      existing = await jsm.streams.info(config.name);
    } catch (err) {
      if (!isNotFound(err)) throw brokerError(nc, `could not look up stream ${config.name}`, err);
    }
    // Replicas not asked for: an existing stream keeps its own.
    if (existing && options.replicas === undefined) config = { ...config, num_replicas: existing.config.num_replicas };
    try {
      if (!existing) await jsm.streams.add(config);
      else {
        const changed = changedConfig(layout, existing.config, config);
        await jsm.streams.update(config.name, changed);
        changes.push(...changesOf(existing.config, changed));
      }
    } catch (err) {
      if (err instanceof BrokerError) throw err;
      throw brokerError(nc, `could not create or update stream ${config.name}`, err);
    }
  }
  return { ...layout, changes };
}

/** The reported settings whose value differs between `before` and `after`. */
function changesOf(before: StreamConfig, after: StreamConfig): StreamChange[] {
  return REPORTED_FIELDS.filter((field) => before[field] !== after[field]).map((field) => ({
    stream: before.name,
    field,
    from: before[field],
    to: after[field],
  }));
}

/** The existing stream's configuration brought to `config`, or why it cannot be. */
function changedConfig(layout: JetStreamLayout, existing: StreamConfig, config: StreamConfig): StreamConfig {
  const { name, retention, storage, subjects, ...changeable } = config;
  if (!sameSubjects(existing.subjects, subjects)) {
    // What follows the prefix in this stream's subject (`.run.>`, `.requests`, `.hub.>`) names the prefix of theirs.
    const tail = subjects[0]!.slice(layout.prefix.length);
    const theirs = existing.subjects?.[0]?.endsWith(tail) ? existing.subjects[0].slice(0, -tail.length) : undefined;
    const owner = theirs === undefined ? `subjects ${JSON.stringify(existing.subjects)}` : `prefix "${theirs}"`;
    throw new BrokerError(
      `stream ${name} belongs to ${owner}, not to prefix "${layout.prefix}": both map to that stream name; choose a prefix that differs in more than case, "." and "_"`,
    );
  }
  if (existing.retention !== retention) {
    throw new BrokerError(
      `stream ${name} exists with retention "${existing.retention}", not "${retention}"; delete it or choose another prefix`,
    );
  }
  if (storage !== existing.storage) {
    throw new BrokerError(`stream ${name} exists with storage "${existing.storage}", not "${storage}"`);
  }
  return { ...existing, ...changeable };
}

function sameSubjects(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return a?.length === b?.length && (a ?? []).every((subject, i) => subject === b?.[i]);
}
