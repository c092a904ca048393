// The JetStream clients of a connection, made once, and how messages name its server.
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';

/** The JetStream client and manager of one connection. */
export interface Clients {
  readonly js: JetStreamClient;
  manager(): Promise<JetStreamManager>;
}

const clientsByConnection = new WeakMap<NatsConnection, Clients>();

/** One JetStream client and manager per connection, made on first use. */
export function clientsOf(nc: NatsConnection): Clients {
  let clients = clientsByConnection.get(nc);
  if (!clients) {
    let manager: Promise<JetStreamManager> | undefined;
    clients = {
      js: jetstream(nc),
      // No account check: a server without JetStream fails the first real request, with its own message.
      manager: () => (manager ??= jetstreamManager(nc, { checkAPI: false })),
    };
    clientsByConnection.set(nc, clients);
  }
  return clients;
}

/** `nats://host:port` of the server a connection is on, for error messages. */
export function serverOf(nc: NatsConnection): string {
  return nc.getServer() || 'the NATS server';
}
