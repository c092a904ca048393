// What a reader says when a run's records are not all in the stream: the
// stream's limits are named only when they could have removed them (the
// stream now begins past them), never as a guess.
import { headers } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { BrokerError, fromJetStream } from '../../src/jetstream/index.js';
import { encodeRecord } from '../../src/jetstream/wire/records.js';
import { suiteStreams } from './support.js';

describe('a reader of a run whose start is not in the stream', () => {
  const { prefix, layout, connection } = suiteStreams('starts');

  /** Stores events 1 and 2 of attempt 1 of `runId`, and returns the sequence of the first. */
  async function events(runId: string): Promise<number> {
    const js = jetstream(connection());
    let first = 0;
    for (const seq of [1, 2]) {
      const h = headers();
      h.set('EvoSci-Attempt', '1');
      h.set('EvoSci-Seq', String(seq));
      const ack = await js.publish(layout.attemptSubject(runId, 1), `{"type": "text", "content": "${seq}"}`, {
        headers: h,
      });
      first ||= ack.seq;
    }
    return first;
  }

  it('does not blame the limits for a start that was never stored', async () => {
    await events('never-1');
    const error = await lastValueFrom(fromJetStream(connection(), 'never-1', { prefix })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokerError);
    expect((error as Error).message).toMatch(
      /^run never-1: the started record of attempt 1 is no longer in stream \S+, so the attempt cannot be read from its start(; read on \S+)?$/,
    );
    expect((error as Error).message).not.toMatch(/limits|removed/);
  });

  it('says a start before the stream’s first message was removed', async () => {
    const js = jetstream(connection());
    const at = new Date().toISOString();
    const started = await js.publish(
      layout.statusSubject('gone-1'),
      encodeRecord({ record: 'started', runId: 'gone-1', attempt: 1, at }),
    );
    await events('gone-1');
    // As max_age, or a purge, would: the stream now begins after the run's start.
    await (await jetstreamManager(connection())).streams.purge(layout.eventsStream, { seq: started.seq + 1 });
    const error = await lastValueFrom(fromJetStream(connection(), 'gone-1', { prefix })).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /the started record of attempt 1 is no longer in stream .*; the stream now begins at message \d+: those before were removed \(its limits, or a purge\)/,
    );
  });
});
