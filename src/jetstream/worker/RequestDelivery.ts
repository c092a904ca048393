import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { DEFAULTS, nanos } from '../wire/defaults.js';

/**
 * The stream sequence in a JetStream ack subject: `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>…`
 * (9 tokens), or with a domain and an account hash after `ACK` (11 tokens or more).
 */
function streamSequenceOf(ackSubject: string): number {
  const tokens = ackSubject.split('.');
  const offset = tokens.length >= 11 ? 4 : 2;
  if (tokens.length !== 9 && tokens.length < 11) {
    throw new TypeError(`not a JetStream delivery: its reply subject is ${JSON.stringify(ackSubject)}`);
  }
  const sequence = Number(tokens[offset + 3]);
  if (tokens[0] !== '$JS' || tokens[1] !== 'ACK' || !Number.isSafeInteger(sequence) || sequence < 1) {
    throw new TypeError(`not a JetStream delivery: its reply subject is ${JSON.stringify(ackSubject)}`);
  }
  return sequence;
}

/**
 * One delivery of a run request from the workers' consumer, answered in
 * JetStream's ack protocol on its reply subject. The official client makes
 * these only for its own pulls, whose inboxes end with them; a worker's
 * pulls share one inbox (see `WorkerInbox`). Once acknowledged, handed back
 * or terminated, later answers are ignored, as the client's own do; an
 * answer the closed connection cannot send is lost as it would be on the
 * wire, and the server redelivers after the ack wait.
 */
export class RequestDelivery {
  /** The request's sequence in the requests stream. */
  readonly seq: number;
  readonly headers: MsgHdrs | undefined;
  private answered = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly msg: Msg,
  ) {
    this.seq = streamSequenceOf(msg.reply ?? '');
    this.headers = msg.headers;
  }

  json(): unknown {
    return this.msg.json();
  }

  /** Still being worked on: the server restarts the ack wait. Sent, not confirmed. */
  working(): void {
    if (!this.answered) this.send('+WPI');
  }

  /**
   * Still being worked on, resolving once the server confirms it (JetStream
   * answers an ack sent as a request); rejects when no answer comes within
   * `timeoutMs`, or none can (no responders: the consumer has no leader).
   * Resolves at once once the request was answered otherwise.
   */
  async confirmWorking(timeoutMs: number): Promise<void> {
    if (this.answered) return;
    await this.nc.request(this.msg.reply!, '+WPI', { timeout: timeoutMs });
  }

  /** Handed back, to be delivered again at once or after `delayMs`. */
  nak(delayMs?: number): void {
    this.answer(delayMs && delayMs > 0 ? `-NAK ${JSON.stringify({ delay: nanos(delayMs) })}` : '-NAK');
  }

  /** Never to be delivered again. */
  term(reason?: string): void {
    this.answer(reason ? `+TERM ${reason}` : '+TERM');
  }

  /** Acknowledged, resolving once the server confirms it. */
  async ackAck(): Promise<void> {
    if (this.answered) return;
    this.answered = true;
    await this.nc.request(this.msg.reply!, '+ACK', { timeout: DEFAULTS.ackTimeoutMs });
  }

  private answer(payload: string): void {
    if (this.answered) return;
    this.answered = true;
    this.send(payload);
  }

  private send(payload: string): void {
    try {
      this.nc.publish(this.msg.reply!, payload);
    } catch {
      // The connection closed: the server redelivers after the ack wait.
    }
  }
}
