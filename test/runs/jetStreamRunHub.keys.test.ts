// Keyed run ids against a NATS user with the documented submitter rights,
// on a nats-server of this test's own: the id of an idempotency key carries
// the hubs' secret, which a submitter can neither read nor write, so what it
// stores under an id it computes (a cancel, a `submitted` record with a
// prompt of its own) touches no run a key starts; a `submitted` record
// without the request's fingerprint is never taken for that request.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom, toArray, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerError, ensureStreams, jetStreamRunHub, layoutOf, serveRuns } from '../../src/jetstream/index.js';
import { IdempotencyKeyReusedError } from '../../src/runs/errors.js';
import type { RunHub } from '../../src/runs/index.js';
import { ownBroker, uniquePrefix, type OwnBroker } from '../jetstream/support.js';
import { brokerUsers } from '../jetstream/users.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';

const VICTIM = 'the victim’s prompt';
const ATTACKER = 'the attacker’s prompt';
/** The id a key had when it was its hash alone: what anyone could compute. */
const hashed = (key: string) => `k${createHash('sha256').update(key).digest('base64url')}`;

describe('keyed run ids against a submitter', () => {
  const prefix = uniquePrefix('hub-keys');
  const layout = layoutOf({ prefix });
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-keys-'));
  const connections: NatsConnection[] = [];
  let broker: OwnBroker;
  let serving: Subscription;
  let hubUser: NatsConnection;
  let attacker: NatsConnection;
  let hub: RunHub;

  const as = async (user: string) => {
    const nc = await connect({ servers: broker.url, user, pass: `${user}-secret` });
    connections.push(nc);
    return nc;
  };
  /** Stores `record` on `subject` with the attacker's rights, as any client of theirs could. */
  const forge = (subject: string, record: object) => jetstream(attacker).publish(subject, JSON.stringify(record));
  const finished = (hub: RunHub, id: string) => lastValueFrom(hub.follow(id).pipe(toArray()));

  beforeAll(async () => {
    broker = await ownBroker({ config: brokerUsers(prefix), credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    const worker = await as('worker');
    await ensureStreams(worker, { prefix, storage: 'memory' });
    serving = serveRuns(worker, { prefix, concurrency: 2, runOptions: scenarioRunOptions(dir) }).subscribe();
    hubUser = await as('hub');
    attacker = await as('submitter');
    hub = jetStreamRunHub(hubUser, { prefix });
  });
  afterAll(async () => {
    serving?.unsubscribe();
    for (const nc of connections) await nc.close();
    await broker?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the run a key starts alone when a submitter cancels the id it computes for the key in advance', async () => {
    const key = 'order-1';
    // What it can compute, it cancels, as cancelRun stores a cancel.
    const guessed = hashed(key);
    await forge(layout.cancelSubject(guessed), { runId: guessed, at: new Date().toISOString() });

    const { id, created } = await hub.start(request('demo', VICTIM), { idempotencyKey: key });
    expect(created).toBe(true);
    expect(await finished(hub, id)).toHaveLength(DEMO_EVENTS);
    expect(await hub.status(id)).toMatchObject({ state: 'completed', prompt: VICTIM });
  });

  it('starts the key’s own run when a submitter has stored a run of its prompt, without a fingerprint, under the id it computes', async () => {
    const key = 'order-2';
    const guessed = hashed(key);
    const forged = { record: 'submitted', runId: guessed, at: new Date().toISOString(), prompt: ATTACKER };
    await forge(layout.submittedSubject(guessed), forged);

    const started = await hub.start(request('demo', VICTIM), { idempotencyKey: key });
    expect(started.created).toBe(true);
    await finished(hub, started.id);
    expect(await hub.status(started.id)).toMatchObject({ state: 'completed', prompt: VICTIM });
    // Once the id is known (any submitter lists runs), a record appended after the run's own is never read.
    await forge(layout.submittedSubject(started.id), { ...forged, runId: started.id });
    expect(await hub.start(request('demo', VICTIM), { idempotencyKey: key })).toEqual({
      id: started.id,
      created: false,
    });
    expect(await hub.status(started.id)).toMatchObject({ prompt: VICTIM });
    expect(spawnsIn(dir).filter((s) => s.argv.includes(ATTACKER))).toEqual([]);
  });

  it('refuses a key whose id holds a submitted record without the request’s fingerprint (422), and queues nothing', async () => {
    // As if the id had leaked before its run: the test knows this hub's secret.
    const idSecret = randomBytes(32);
    const leaky = jetStreamRunHub(hubUser, { prefix, idSecret });
    const key = 'order-3';
    const id = `k${createHmac('sha256', idSecret).update(key).digest('base64url')}`;
    await forge(layout.submittedSubject(id), {
      record: 'submitted',
      runId: id,
      at: new Date().toISOString(),
      prompt: ATTACKER,
    });
    const jsm = await jetstreamManager(hubUser, { checkAPI: false });
    const lastQueued = async () => (await jsm.streams.info(layout.requestsStream)).state.last_seq;
    const queued = await lastQueued();
    await expect(leaky.start(request('demo', VICTIM), { idempotencyKey: key })).rejects.toThrow(
      IdempotencyKeyReusedError,
    );
    expect(await lastQueued()).toBe(queued);
  });

  it('names a key’s run the same on every hub sharing the secret, and refuses keys on a hub that can reach no secret', async () => {
    const other = jetStreamRunHub(await as('hub'), { prefix });
    const first = await hub.start(request('demo'), { idempotencyKey: 'shared' });
    expect(await other.start(request('demo'), { idempotencyKey: 'shared' })).toEqual({ id: first.id, created: false });
    await finished(hub, first.id);
    // The secret is out of a submitter's reach, to read or to write.
    const jsm = await jetstreamManager(attacker, { checkAPI: false });
    await expect(jsm.streams.getMessage(layout.hubStream, { last_by_subj: layout.secretSubject })).rejects.toThrow(
      /Permissions Violation/,
    );
    await expect(jetstream(attacker).publish(layout.secretSubject, randomBytes(32))).rejects.toThrow(
      /Permissions Violation/,
    );
    // A hub run as a plain submitter has no rights on the secret: keyed starts fail, saying so; others go on.
    const plain = jetStreamRunHub(attacker, { prefix });
    await expect(plain.start(request('demo'), { idempotencyKey: 'plain' })).rejects.toThrow(BrokerError);
    await expect(plain.start(request('demo'), { idempotencyKey: 'plain' })).rejects.toThrow(/Permissions Violation/);
    await finished(plain, (await plain.start(request('demo'))).id);
    // Given a secret of its own, it names its own runs.
    const own = jetStreamRunHub(attacker, { prefix, idSecret: randomBytes(32).toString('hex') });
    const ownRun = await own.start(request('demo'), { idempotencyKey: 'shared' });
    expect(ownRun).toMatchObject({ created: true });
    expect(ownRun.id).not.toBe(first.id);
    await finished(own, ownRun.id);
  });

  it.each([
    ['too short', 'sixteen chars ok'],
    ['a word repeated', 'password'.repeat(8)],
    ['a few letters in turn', 'abcd'.repeat(16)],
    ['one byte repeated', new Uint8Array(64)],
    ['not a string or bytes', 42],
  ])('refuses an idSecret that is %s, without showing it', (_, idSecret) => {
    expect(() => jetStreamRunHub(hubUser, { prefix, idSecret: idSecret as string })).toThrow(
      /^jetStreamRunHub: idSecret must be at least 32 bytes with some 128 bits of entropy .*, got /,
    );
    try {
      jetStreamRunHub(hubUser, { prefix, idSecret: idSecret as string });
    } catch (err) {
      if (typeof idSecret === 'string') expect((err as Error).message).not.toContain(idSecret);
    }
  });

  it('takes a secret of 32 random bytes, as bytes, hex or base64', () => {
    const bytes = randomBytes(32);
    for (const idSecret of [bytes, bytes.toString('hex'), bytes.toString('base64')])
      expect(() => jetStreamRunHub(hubUser, { prefix, idSecret })).not.toThrow();
  });
});
