// The NATS users of docs/security.md, as a nats-server
// authorization block for one prefix: what the tests with a broker of their
// own check.
import { layoutOf } from '../../src/jetstream/index.js';

/**
 * What a submitter may publish: its requests, the runs its hub takes, its
 * cancels, the JetStream API calls that read runs, and the size of the work
 * queue as the workers' consumer counts it (for a hub's `maxQueued`).
 */
export function submitterPublishes(prefix: string, options: { cancel?: boolean } = {}): string[] {
  const layout = layoutOf({ prefix });
  const events = layout.eventsStream;
  return [
    layout.requestsSubject,
    layout.allSubmittedSubjects,
    ...(options.cancel === false ? [] : [layout.allCancelSubjects]),
    `$JS.API.STREAM.INFO.${events}`,
    `$JS.API.STREAM.INFO.${layout.requestsStream}`,
    `$JS.API.CONSUMER.INFO.${layout.requestsStream}.${layout.workersConsumer}`,
    `$JS.API.STREAM.MSG.GET.${events}`,
    `$JS.API.CONSUMER.CREATE.${events}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${events}.>`,
    `$JS.API.CONSUMER.INFO.${events}.>`,
    `$JS.API.CONSUMER.DELETE.${events}.>`,
  ];
}

/** What a hub's user may publish besides a submitter's: the hubs' secret, stored once, and read. */
export function hubPublishes(prefix: string): string[] {
  const layout = layoutOf({ prefix });
  return [...submitterPublishes(prefix), layout.secretSubject, `$JS.API.STREAM.MSG.GET.${layout.hubStream}`];
}

const list = (subjects: readonly string[]) => subjects.map((s) => `"${s}"`).join(', ');

/**
 * `submitter` (password `submitter-secret`), `hub` (`hub-secret`) and
 * `worker` (`worker-secret`) as documented; `reader` (`reader-secret`) has
 * the submitter's rights but its cancels, for the tests that show a cancel
 * needs them.
 */
export function brokerUsers(prefix: string): string {
  const layout = layoutOf({ prefix });
  const user = (name: string, publish: readonly string[], subscribe: readonly string[]) =>
    `{ user: ${name}, password: ${name}-secret, permissions: { publish: { allow: [${list(publish)}] }, subscribe: { allow: [${list(subscribe)}] } } }`;
  return `
authorization {
  users = [
    ${user('submitter', submitterPublishes(prefix), ['_INBOX.>'])}
    ${user('hub', hubPublishes(prefix), ['_INBOX.>'])}
    ${user('worker', [`${prefix}.run.>`, '$JS.API.>', `$JS.ACK.${layout.requestsStream}.>`], ['_INBOX.>', layout.allCancelSubjects])}
    ${user('reader', submitterPublishes(prefix, { cancel: false }), ['_INBOX.>'])}
  ]
}`;
}
