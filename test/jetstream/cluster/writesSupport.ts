// What the writers' cluster test and benchmark share: events that carry the
// time they were written, a leader move, and how long after its writing each
// event was stored, read from the stream's own timestamps.
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type MsgRequest } from '@nats-io/jetstream';
import { interval, map, take, type Observable } from 'rxjs';
import type { EvoEvent } from '../../../src/events/codecs.js';
import type { JetStreamLayout } from '../../../src/jetstream/index.js';

/** `count` text events, one every `periodMs`, each saying its number and when it was written (`event 7 at 1765...`). */
export function timed(count: number, periodMs: number): Observable<EvoEvent> {
  return interval(periodMs).pipe(
    take(count),
    map((i) => ({ type: 'text', content: `event ${i + 1} at ${Date.now()} `.padEnd(120, '.') })),
  );
}

/** The number of an event of `timed`, from its content. */
export const numberOf = (event: EvoEvent): number =>
  Number(/^event (\d+) /.exec((event as { content: string }).content)?.[1]);

/** Moves the leadership of `stream` to another server, as an operator's `nats stream cluster step-down` does. */
export async function stepDown(nc: NatsConnection, stream: string): Promise<void> {
  const reply = await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 10_000 });
  const answer = reply.json<{ success?: boolean; error?: { description?: string } }>();
  if (!answer.success) throw new Error(`stepdown of ${stream} refused: ${answer.error?.description ?? reply.string()}`);
}

/**
 * How long after its writing each event of `runIds` was stored (the stream's
 * timestamp), in ms, by run: read message by message from the stream's
 * leader, whose copy is whole while a restarted replica catches up.
 */
export async function storeDelays(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runIds: readonly string[],
): Promise<Map<string, number[]>> {
  const jsm = await jetstreamManager(nc);
  const delays = new Map<string, number[]>();
  for (const id of runIds) {
    const subject = layout.attemptSubject(id, 1);
    const ms: number[] = [];
    for (let seq = 1; ;) {
      const m = await jsm.streams
        .getMessage(layout.eventsStream, { seq, next_by_subj: subject } as unknown as MsgRequest)
        .catch(() => null);
      if (!m) break;
      ms.push(Date.parse(m.timestamp) - Number(/ at (\d+) /.exec(m.string())?.[1]));
      seq = m.seq + 1;
    }
    delays.set(id, ms);
  }
  return delays;
}

/** The longest of some delays, and how many passed `overMs`. */
export function longest(delays: Iterable<readonly number[]>, overMs: number): { max: number; over: number } {
  const all = [...delays].flat();
  return { max: Math.max(0, ...all), over: all.filter((d) => d > overMs).length };
}
