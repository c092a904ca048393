import * as t from 'io-ts';

/**
 * A request for one run, as queued: what a worker needs to start it. A
 * worker takes its `prompt` and the thread it `resume`s; `workdir`,
 * `autoMode` and `timeoutMs` only if its `allowFromRequest` names them (by
 * default none: a request that sets one is dead-lettered), and `metadata`
 * for a `runOptions` function to read.
 */
export const RunRequest = t.intersection([
  t.type({ runId: t.string, prompt: t.string }),
  t.partial({
    workdir: t.string,
    autoMode: t.boolean,
    resume: t.string,
    timeoutMs: t.number,
    /** Anything the app's workers read, such as a project or a priority. */
    metadata: t.record(t.string, t.string),
  }),
]);
export type RunRequest = t.TypeOf<typeof RunRequest>;
