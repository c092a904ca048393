// What a run hub says about its runs, as JSON: the status of a run, how it
// ended, and what a start request may carry. No Node built-ins: the browser
// client (`followRun`) decodes the same codecs.
import * as t from 'io-ts';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';

/** Where a run is: waiting for a worker, running, or ended one of four ways. */
export const RunState = t.keyof({
  /** Waiting to start. */
  queued: null,
  /** Its CLI is running. */
  running: null,
  /** It read `done`. */
  completed: null,
  /** It ended with an error. */
  failed: null,
  /** A cancel stopped it. */
  cancelled: null,
  /** The hub closed or died while it ran. */
  interrupted: null,
});
export type RunState = t.TypeOf<typeof RunState>;

/** The states a run ends in. */
export type EndState = Exclude<RunState, 'queued' | 'running'>;

/**
 * Why a run did not complete: its error's class name (`ExitError`,
 * `CancelledError`, …), its one-line message and its details. Stderr is not
 * carried: it stays on the server, for `RunOptions.onStderr`.
 */
export const RunErrorInfo = t.intersection([
  t.type({
    /** The error's class name, such as `ExitError`. */
    name: t.string,
    /** Its one-line message. */
    message: t.string,
  }),
  t.partial({
    /** The CLI's exit code, when it exited. */
    exitCode: t.number,
    /** The signal that ended the CLI, such as `SIGKILL`. */
    signal: t.string,
    /** The thread the CLI reported, to resume it. */
    threadId: t.string,
  }),
]);
export type RunErrorInfo = t.TypeOf<typeof RunErrorInfo>;

/** How a run ended: the `end` event of its event stream. */
export const RunEnd = t.intersection([
  t.type({
    /** The state it ended in. */
    state: t.keyof({
      /** It read `done`. */
      completed: null,
      /** It ended with an error. */
      failed: null,
      /** A cancel stopped it. */
      cancelled: null,
      /** The hub closed or died while it ran. */
      interrupted: null,
    }),
  }),
  t.partial({
    /** Why it did not complete; absent when it completed. */
    error: RunErrorInfo,
  }),
]);
export type RunEnd = t.TypeOf<typeof RunEnd>;

/** One run as a hub reports it (`GET /runs/:id`). */
export const RunStatus = t.intersection([
  t.type({
    /** The run's id, as the hub gave it. */
    id: t.string,
    /** Where it is now. */
    state: RunState,
    /** What the agent was asked. */
    prompt: t.string,
    /** When the hub took the request, as an ISO date. */
    createdAt: t.string,
    /** Events stored so far. */
    events: t.number,
  }),
  t.partial({
    /** When its process started, and when the run ended, as ISO dates. */
    startedAt: t.string,
    /** When the run ended, as an ISO date. */
    endedAt: t.string,
    /** Why it did not complete, once it failed, was cancelled or was interrupted. */
    error: RunErrorInfo,
    /** The thread id from the resume hint the run printed: what a follow-up request resumes. */
    threadId: t.string,
    /** The thread this run resumed. */
    resumed: t.string,
    /** The strings its start request carried, for the hub's `runOptions`. */
    metadata: t.record(t.string, t.string),
    /** When a cancel of the run was stored, as an ISO date, while the run has not ended: its end is pending. */
    cancelRequestedAt: t.string,
  }),
]);
export type RunStatus = t.TypeOf<typeof RunStatus>;

/** A thread id: EvoSci's prefix of a uuid, a fake's name; never something that reads as an option. */
export const THREAD_ID = /^[A-Za-z0-9][\w-]{0,63}$/;

/**
 * What a request to start a run may carry. Which of `workdir`, `autoMode`
 * and `timeoutMs` a hub takes is its own choice (`allowFromRequest`); the
 * rest of how the run starts is the hub's (`runOptions`).
 */
export const StartRequest = t.exact(
  t.intersection([
    t.type({
      /** What to ask the agent. */
      prompt: t.string,
    }),
    t.partial({
      /** The thread id to continue; it must match `THREAD_ID`. */
      resume: t.string,
      /** The directory the CLI works in. */
      workdir: t.string,
      /** `false` runs with `--no-auto-mode`, stopping to ask. */
      autoMode: t.boolean,
      /** How long the run may take before it is cancelled, in milliseconds. */
      timeoutMs: t.number,
      /** Strings the hub's `runOptions` function may read (a project, a scenario); kept in the status. */
      metadata: t.record(t.string, t.string),
    }),
  ]),
);
export type StartRequest = t.TypeOf<typeof StartRequest>;

/** One event of a run and its index in the run, from 0: what `Last-Event-ID` and `after` name. */
export interface IndexedEvent {
  /** Its place in the run, from 0. */
  readonly index: number;
  /** The event. */
  readonly event: EvoEvent | UnknownEvent;
}
