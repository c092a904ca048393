// The run id an idempotency key names: the same on every hub of a
// deployment, and computable by no one without the hubs' secret, so that
// nobody can take, or cancel in advance, a run another is about to start.
import { createHmac, randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import type { NatsConnection } from '@nats-io/transport-node';
import { BrokerError, brokerError, StatusMovedError } from './wire/errors.js';
import type { JetStreamLayout } from './wire/layout.js';
import { firstOn } from './read/status.js';
import { publishStored, type PublishTiming } from './write/publishStored.js';

/** The least a secret may be: 32 bytes, with some 128 bits of entropy among them. */
const LEAST_BYTES = 32;
const LEAST_BITS = 128;

/**
 * The entropy of `bytes` as far as they show it, in bits: the least of what
 * their byte frequencies estimate (a byte repeated has none) and of what
 * they compress to (a word repeated has little).
 */
function estimatedBits(bytes: Uint8Array): number {
  const counts = new Map<number, number>();
  for (const byte of bytes) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) bits -= count * Math.log2(count / bytes.length);
  return Math.min(bits, 8 * deflateRawSync(bytes, { level: 9 }).length);
}

/** Why `bytes` are too weak to be a secret, if they are. */
function weakness(bytes: Uint8Array): string | undefined {
  const bits = Math.floor(estimatedBits(bytes));
  if (bytes.length >= LEAST_BYTES && bits >= LEAST_BITS) return undefined;
  return `${bytes.length} bytes of some ${bits} bits`;
}

/**
 * The secret of option `idSecret`: a string (its UTF-8 bytes) or bytes, at
 * least 32 of them with some 128 bits of entropy: `randomBytes(32)`, or its
 * hex or base64. A `TypeError` otherwise, which never shows the secret.
 */
export function checkSecret(fn: string, name: string, secret: unknown): Uint8Array {
  const bytes =
    typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret instanceof Uint8Array ? secret : undefined;
  const weak = bytes === undefined ? `a ${typeof secret}` : weakness(bytes);
  if (weak !== undefined)
    throw new TypeError(
      `${fn}: ${name} must be at least ${LEAST_BYTES} bytes with some ${LEAST_BITS} bits of entropy (randomBytes(32), or its hex or base64), got ${weak}`,
    );
  return Uint8Array.from(bytes!);
}

/** The run id of idempotency key `key`: `k` and the key's HMAC-SHA256 under the secret, one subject token of 44 characters. */
export function keyedRunId(secret: Uint8Array, key: string): string {
  return `k${createHmac('sha256', secret).update(key, 'utf8').digest('base64url')}`;
}

/**
 * The secret a hub makes keyed run ids with: its own `idSecret`, or else the
 * one every hub of the prefix shares, kept on the hub stream where submitters
 * have no rights. The first hub that needs it stores 32 random bytes there,
 * on the condition that none is stored yet; every hub reads the first stored.
 */
export class HubSecret {
  private shared: Promise<Uint8Array> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly layout: JetStreamLayout,
    private readonly timing: PublishTiming,
    private readonly own: Uint8Array | undefined,
  ) {}

  /** The secret; a `BrokerError` if the broker fails or refuses it (a user without the hub's rights), tried again next time. */
  get(): Promise<Uint8Array> {
    if (this.own) return Promise.resolve(this.own);
    this.shared ??= this.fetch().catch((err: unknown) => {
      this.shared = undefined;
      throw err instanceof BrokerError
        ? err
        : brokerError(
            this.nc,
            `could not read the hubs' secret from stream ${this.layout.hubStream} (has ensureStreams run?)`,
            err,
          );
    });
    return this.shared;
  }

  private async fetch(): Promise<Uint8Array> {
    const stored = await this.read();
    if (stored) return stored;
    const { layout } = this;
    const target = { subject: layout.secretSubject, msgID: 'secret', headers: {}, expectLastSequence: 0 };
    // Another hub may store it first: then this one is refused, or answered as its duplicate, and reads that one.
    await publishStored(this.nc, target, randomBytes(LEAST_BYTES), this.timing).catch((err: unknown) => {
      if (!(err instanceof StatusMovedError)) throw err;
    });
    const made = await this.read();
    if (!made) throw new BrokerError(`the hubs' secret was stored on ${layout.secretSubject}, and is not there`);
    return made;
  }

  private async read(): Promise<Uint8Array | undefined> {
    const { layout } = this;
    const stored = await firstOn(this.nc, layout.hubStream, layout.secretSubject);
    if (!stored) return undefined;
    const weak = weakness(stored.data);
    if (weak !== undefined)
      throw new BrokerError(
        `the hubs' secret on ${layout.secretSubject} is not one (${weak}); remove it, or give idSecret`,
      );
    return Uint8Array.from(stored.data);
  }
}
