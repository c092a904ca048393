// A large event (a `write_file` call's arguments, a long `done.response`,
// whatever the broker's `max_payload`) goes as parts of at most 16 KiB: each a
// message of its own on the attempt's subject, with the event's `EvoSci-Seq`
// and `EvoSci-Part: <part>/<parts>`. They share the event's stream, subject,
// retention, permissions and de-duplication (`Nats-Msg-Id` per part); a
// reader puts them back in order and decodes them as one line.
import type { NatsConnection } from '@nats-io/transport-node';

/** One message of an event sent in parts: its 1-based place, and how many there are. */
export interface Part {
  readonly index: number;
  readonly count: number;
}

/** Room left in each message for its headers (run id, msg id, sequence, part), which count against `max_payload`. */
const HEADER_ROOM = 4096;
/**
 * The most of an event one message carries, whatever the server allows. A
 * reader pulls up to 1,000 messages at a time (so that it keeps up with a run
 * of small events across a slow link), and the server queues what a pull asks
 * for: parts of 16 KiB keep that within 16 MiB, well inside the server's
 * `max_pending` (64 MiB), where parts of 1 MiB got a reader replaying a large
 * run disconnected as a slow consumer. Throughput is the same either way: the
 * cost is in encoding and decoding the event, not in its messages.
 */
const MOST_PART_BYTES = 16 * 1024;
/** The least, for a server whose `max_payload` is absurdly small. */
const LEAST_PART_BYTES = 1024;

/** The bytes of an event one message carries on this connection's server: a longer event goes as parts. */
export function partBytesOf(nc: NatsConnection): number {
  const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
  return Math.max(LEAST_PART_BYTES, Math.min(MOST_PART_BYTES, maxPayload - HEADER_ROOM));
}

/** The `EvoSci-Part` header of a part. */
export function partHeader(part: Part): string {
  return `${part.index}/${part.count}`;
}

const PART = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,8})$/;

/** The part a message's `EvoSci-Part` header names; `undefined` without one (a whole event), `null` if it is not one. */
export function partOf(header: string | undefined): Part | undefined | null {
  if (header === undefined || header === '') return undefined;
  const match = PART.exec(header);
  if (!match) return null;
  const index = Number(match[1]);
  const count = Number(match[2]);
  return index <= count ? { index, count } : null;
}
