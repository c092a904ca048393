// No import at all: `evosci-rx/otel`, which runs in browsers and type-checks without Node's types, reads this.

/**
 * What a run's Observable tells about itself: `RunOptions.prompt` and
 * `resume`, what its trace records; nothing that could be a secret (`env`).
 */
export interface RunIdentity {
  readonly prompt: string;
  readonly resume?: string;
}

/** Kept beside the Observable, as `positionOf` keeps positions beside events: the Observable stays a plain one. */
const identities = new WeakMap<object, RunIdentity>();

/**
 * The prompt and resumed thread of the run whose Observable `run()` returned;
 * `undefined` for any other Observable, an operator's result included. How
 * `traceRun()` right after `run()` knows them without being told twice.
 */
export function runOptionsOf(events$: object): RunIdentity | undefined {
  return identities.get(events$);
}

/** Marks `events$` as the run of `options`; returns it. A copy: a later change to `options` tells nothing. */
export function carryRunOptions<T extends object>(events$: T, options: RunIdentity): T {
  const identity: RunIdentity =
    options.resume === undefined ? { prompt: options.prompt } : { prompt: options.prompt, resume: options.resume };
  identities.set(events$, Object.freeze(identity));
  return events$;
}
