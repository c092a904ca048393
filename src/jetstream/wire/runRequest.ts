import * as t from 'io-ts';

/**
 * A request for one run, as queued: what a worker needs to start it. A
 * worker takes its `prompt` and the thread it `resume`s; `workdir`,
 * `autoMode` and `timeoutMs` only if its `allowFromRequest` names them (by
 * default none: a request that sets one is dead-lettered), and `metadata`
 * for a `runOptions` function to read.
 */
export const RunRequest = t.intersection([
  t.type({
    /** The run's id, which its events and status records carry. */
    runId: t.string,
    /** What to ask the agent; must not be empty. */
    prompt: t.string,
  }),
  t.partial({
    /** The directory the CLI works in. */
    workdir: t.string,
    /** `false` runs with `--no-auto-mode`, stopping to ask. */
    autoMode: t.boolean,
    /** The thread id to continue. */
    resume: t.string,
    /** How long the run may take before it is cancelled, in milliseconds. */
    timeoutMs: t.number,
    /** Anything the app's workers read, such as a project or a priority. */
    metadata: t.record(t.string, t.string),
  }),
]);
export type RunRequest = t.TypeOf<typeof RunRequest>;
