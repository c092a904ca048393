// An event too large for one message of the broker (a `write_file` call's
// arguments, a long `done.response`) goes as parts: each a message of its own
// on the attempt's subject, with the event's `EvoSci-Seq` and
// `EvoSci-Part: <part>/<parts>`. They share the event's stream, subject,
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
const MIB = 1024 * 1024;
/**
 * The most of an event one message carries, whatever the server allows: NATS
 * is made for small messages, and a part that is quick to send keeps its ack
 * within its timeout on a slow link.
 */
const MOST_PART_BYTES = MIB - HEADER_ROOM;
/** The least, for a server whose `max_payload` is absurdly small. */
const LEAST_PART_BYTES = 1024;

/** The bytes of an event one message carries on this connection's server: a longer event goes as parts. */
export function partBytesOf(nc: NatsConnection): number {
  const maxPayload = nc.info?.max_payload ?? MIB;
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
