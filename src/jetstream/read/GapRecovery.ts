import type { NatsConnection } from '@nats-io/transport-node';
import { BrokerError, lookupError } from '../wire/errors.js';
import type { FollowStart, OrderedReader } from './OrderedReader.js';
import { servingReplicas } from './placement.js';

/**
 * What a run's reader does about a gap in what it read (events missing at
 * the attempt's end, events before its start, too many held ahead of a
 * missing one). In a cluster a consumer reads one server's copy, which may be
 * behind or may have skipped messages it holds; so the run is read again,
 * from the attempt's start, on a server whose copy this reader has not read.
 * Not from past the last message taken: a publish sent again after a leader
 * change stores its event after later ones, so a message before the last one
 * taken may be an event still to come (what was taken is dropped as a repeat). Once every server that serves the stream was
 * read (one only, without a cluster), the gap is the stream's: the reader
 * ends saying where it read, and naming the stream's limits only when they
 * could have removed the messages (the stream now begins past them).
 */
export class GapRecovery {
  /** The stream sequence from which the attempt read is whole: its `started` record, or where reading began. */
  private from: number;
  /** A reread is being decided: gaps seen meanwhile are the old consumer's. */
  private deciding = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    start: FollowStart,
    private readonly end: (error: BrokerError) => void,
  ) {
    this.from = start.from === 'sequence' ? start.sequence : 1;
  }

  /** The `started` record of the attempt read, at stream sequence `streamSequence`, when read from the run's start. */
  started(streamSequence: number): void {
    this.from = Math.max(this.from, streamSequence);
  }

  /** A gap: `what` says what is missing. */
  found(following: OrderedReader, what: string): void {
    if (this.deciding) return;
    this.deciding = true;
    const from = this.from;
    following.rereadElsewhere(from, what).then(
      async (again) => {
        if (!again) this.end(await this.missing(following, what, from));
        this.deciding = false;
      },
      (err: unknown) => {
        this.deciding = false;
        this.end(lookupError(this.nc, `${what}; could not look for another copy in stream ${this.stream}`, err));
      },
    );
  }

  private async missing(following: OrderedReader, what: string, from: number): Promise<BrokerError> {
    const first = await servingReplicas(this.nc, this.stream).then(
      ({ info }) => info.state.first_seq,
      () => undefined,
    );
    const limits =
      first !== undefined && first > from
        ? `; the stream now begins at message ${first}: those before were removed (its limits, or a purge)`
        : '';
    const servers = following.servers;
    return new BrokerError(`${what}${limits}${servers.length > 0 ? `; read on ${servers.join(', ')}` : ''}`);
  }
}
