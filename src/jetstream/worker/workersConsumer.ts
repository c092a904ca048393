import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type Consumer } from '@nats-io/jetstream';
import { DEFAULTS, nanos } from '../wire/defaults.js';
import { isNotFound, lookupError } from '../wire/errors.js';
import { type JetStreamLayout } from '../wire/layout.js';
import { clientsOf } from '../wire/clients.js';
import { retried } from '../wire/backoff.js';

/**
 * The durable pull consumer of the requests stream that all workers share,
 * created or brought to these settings. Tried again while JetStream does not
 * answer or has no leader (an election, a server away), as a publish is, for
 * up to `retryForMs`; a `BrokerError` says why it could not be had: no
 * answer in time, no leader, or (asking whether `ensureStreams` ran) no stream.
 */
export async function workersConsumer(
  nc: NatsConnection,
  layout: JetStreamLayout,
  ackWaitMs: number,
  retryForMs: number = DEFAULTS.retryForMs,
): Promise<Consumer> {
  try {
    return await retried(nc, () => setUp(nc, layout, ackWaitMs), Date.now() + retryForMs);
  } catch (err) {
    throw lookupError(
      nc,
      `could not set up consumer ${layout.workersConsumer} of stream ${layout.requestsStream}`,
      err,
    );
  }
}

async function setUp(nc: NatsConnection, layout: JetStreamLayout, ackWaitMs: number): Promise<Consumer> {
  const jsm = await clientsOf(nc).manager();
  const settings = {
    ack_wait: nanos(ackWaitMs),
    // Unlimited: attempts are counted by their started records, and a delivery that starts
    // nothing (see RequestHandler) must not use up the run's last one.
    max_deliver: -1,
  };
  try {
    await jsm.consumers.info(layout.requestsStream, layout.workersConsumer);
    await jsm.consumers.update(layout.requestsStream, layout.workersConsumer, settings);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.consumers.add(layout.requestsStream, {
      ...settings,
      durable_name: layout.workersConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
  }
  return await clientsOf(nc).js.consumers.get(layout.requestsStream, layout.workersConsumer);
}
