import { concatMap, defer, Observable, Subject, type OperatorFunction } from 'rxjs';
import type { EvoEvent } from '../events.js';
import { run, type ExitInfo, type RunOptions } from './run.js';

/** One turn of a conversation: a prompt, the thread it resumes, and its run's events. */
export interface ConversationTurn {
  readonly prompt: string;
  /** 0 for the first prompt. */
  readonly index: number;
  /** The thread id this turn resumes; `undefined` for a first turn that starts a new thread. */
  readonly resume: string | undefined;
  /**
   * The events of this turn's run, hot like `groupBy`'s groups: subscribe
   * when the turn is emitted. Errors as the run does.
   */
  readonly events$: Observable<EvoEvent>;
}

/**
 * Holds a conversation over several processes: one run per prompt, each
 * resuming the thread of the one before. EvoSci prints a thread's id (its
 * first 8 characters, which `--resume` accepts) when its process exits, so
 * each turn starts once the previous process has exited, up to `lingerMs`
 * after its `done`. Answering a `needs-input` run is one more prompt.
 *
 * A turn's error errors the conversation (there is no thread to go on with
 * reliably); unsubscribing stops the turn in progress.
 *
 * ```ts
 * prompts$.pipe(
 *   converse({ workdir: '/tmp/task', autoMode: false }),
 *   concatMap((turn) => turn.events$.pipe(summarize())),
 * ).subscribe((summary) => console.log(summary.outcome, summary.response));
 * ```
 *
 * ```
 * prompts$:     --a-----------b----------|
 * converse():   --A-----------B----------|     (B resumes A's thread)
 * A.events$:      -e-e-d|                      d: done, then A's process exits
 * B.events$:                  -e-d|
 * ```
 */
export function converse(options: Omit<RunOptions, 'prompt'>): OperatorFunction<string, ConversationTurn> {
  return (prompts$) =>
    defer(() => {
      let thread = options.resume;
      let index = 0;
      return prompts$.pipe(
        concatMap(
          (prompt) =>
            new Observable<ConversationTurn>((subscriber) => {
              const events = new Subject<EvoEvent>();
              let exited = false;
              let completed = false;
              const next = () => {
                if (exited && completed) subscriber.complete();
              };
              subscriber.next({ prompt, index: index++, resume: thread, events$: events.asObservable() });
              const onExit = (info: ExitInfo) => {
                if (info.threadId !== undefined) thread = info.threadId;
                exited = true;
                options.onExit?.(info);
                next();
              };
              const subscription = run({ ...options, prompt, resume: thread, onExit }).subscribe({
                next: (event) => events.next(event),
                error: (err: unknown) => {
                  events.error(err);
                  subscriber.error(err);
                },
                complete: () => {
                  events.complete();
                  completed = true;
                  next();
                },
              });
              return () => subscription.unsubscribe();
            }),
        ),
      );
    });
}
