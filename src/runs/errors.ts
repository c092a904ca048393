// The refusals of a run hub, one class each, so that a server maps each to
// its HTTP status and a client tells them apart. No Node built-ins.
import { EvoSciError, type EvoSciErrorDetails } from '../events/errors.js';

/** The base of a hub's refusals; `status` is the HTTP status `runsHandler` answers with. */
export class RunHubError extends Error {
  static {
    this.prototype.name = 'RunHubError';
  }

  constructor(
    message: string,
    /** The HTTP status that answers this refusal. */
    readonly status: number,
  ) {
    super(message);
  }

  /** The status under the name NestJS's and Fastify's error handlers read. */
  get statusCode(): number {
    return this.status;
  }

  /**
   * Whether the message is meant for the client: a refusal's (4xx) is, a
   * server's failure's (5xx) is not. With `status` and `statusCode`, the shape
   * of an `http-errors` error, which NestJS 12 requires before it answers
   * with the status instead of a 500 (NestJS 11 reads `statusCode` alone).
   */
  get expose(): boolean {
    return this.status < 500;
  }
}

/** No run has this id, and none had. */
export class UnknownRunError extends RunHubError {
  static {
    this.prototype.name = 'UnknownRunError';
  }

  constructor(
    /** The id asked for. */
    readonly id: string,
  ) {
    super(`no run ${JSON.stringify(id.slice(0, 80))}`, 404);
  }
}

/** The run ended and the hub has forgotten it (its limits keep only the latest finished runs). */
export class ForgottenRunError extends RunHubError {
  static {
    this.prototype.name = 'ForgottenRunError';
  }

  constructor(
    /** The run's id. */
    readonly id: string,
  ) {
    super(`run ${id} ended and is no longer kept`, 410);
  }
}

/** The hub is at its bound (`maxLive` runs alive, `maxQueued` waiting): a start is refused, never queued. */
export class HubFullError extends RunHubError {
  static {
    this.prototype.name = 'HubFullError';
  }

  constructor(
    /** The bound the hub is at. */
    readonly limit: number,
    /** Which bound: `maxLive` (runs alive) or `maxQueued` (runs waiting for a worker). */
    readonly option: 'maxLive' | 'maxQueued' = 'maxLive',
  ) {
    const what = option === 'maxLive' ? 'alive' : 'waiting for a worker';
    super(`this hub takes at most ${limit} runs ${what} at once (${option}): wait for one to end, or cancel one`, 429);
  }
}

/** The run's attempt was abandoned and another started (its worker was lost): read it again from its start. */
export class RunRestartedError extends RunHubError {
  static {
    this.prototype.name = 'RunRestartedError';
  }

  constructor(
    /** The run's id. */
    readonly id: string,
    /** The attempt that started again, which a new follow reads from its start. */
    readonly attempt: number,
  ) {
    super(`run ${id} started again as attempt ${attempt} (its worker was lost): read it again from its start`, 409);
  }
}

/** A start request the hub does not take: its shape, or a field its policy does not let through. */
export class RunRequestError extends RunHubError {
  static {
    this.prototype.name = 'RunRequestError';
  }

  constructor(message: string) {
    super(message, 400);
  }
}

/** The idempotency key was used before with another request: the first one's run is not the one asked for. */
export class IdempotencyKeyReusedError extends RunHubError {
  static {
    this.prototype.name = 'IdempotencyKeyReusedError';
  }

  constructor(
    /** The run the key started, with another request. */
    readonly id: string,
  ) {
    super(`this Idempotency-Key started run ${id} with another request`, 422);
  }
}

/** The hub is closing or closed: it starts nothing more. */
export class HubClosedError extends RunHubError {
  static {
    this.prototype.name = 'HubClosedError';
  }

  constructor() {
    super('the run hub is closed', 503);
  }
}

/** The process holding the run stopped before the run ended: a hub reopened on its directory reports it so. */
export class RunInterruptedError extends EvoSciError {
  static {
    this.prototype.name = 'RunInterruptedError';
  }

  constructor(message: string, details: EvoSciErrorDetails = {}) {
    super(message, details);
  }
}
