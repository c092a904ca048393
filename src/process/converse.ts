import { concatMap, defer, Observable, Subject, tap, type OperatorFunction } from 'rxjs';
import type { EvoEvent } from '../events/codecs.js';
import { run, type ExitInfo, type RunOptions } from './run.js';

/** One turn of a conversation: a prompt, the thread it resumes, and its run's events. */
export interface ConversationTurn {
  /** The prompt this turn sends. */
  readonly prompt: string;
  /** 0 for the first prompt. */
  readonly index: number;
  /** The thread id this turn resumes; `undefined` for a first turn that starts a new thread. */
  readonly resume: string | undefined;
  /**
   * The events of this turn's run, hot like `groupBy`'s groups: subscribe
   * when the turn is emitted. Errors as the run does, and whenever the conversation errors.
   */
  readonly events$: Observable<EvoEvent>;
}

/**
 * Holds a conversation over several processes: one run per prompt, each
 * resuming the thread of the one before. EvoSci prints a thread's id (its
 * first 8 characters, which `--resume` accepts) when its process exits, so
 * each turn starts once the previous process has exited, up to `lingerMs`
 * after its `done`. A reply to a `needs-input` run is one more prompt: EvoSci
 * reads it as a new message in the thread, and the paused call gets no answer.
 *
 * A turn's error errors the conversation (there is no thread to go on with
 * reliably), and any error of the conversation errors the `events$` of the
 * turn in progress, so that no reader of it waits for an end that will not
 * come; unsubscribing stops the turn in progress.
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
      const thread = new ConversationThread(options);
      return prompts$.pipe(
        concatMap((prompt) => thread.turn(prompt)),
        // Whatever errors the conversation (a run, a run that could not start, the prompts) errors the turn in progress.
        tap({ error: (err: unknown) => thread.fail(err) }),
      );
    });
}

/** One conversation's state across its turns: the thread to resume, the count, the turn in progress. */
class ConversationThread {
  private thread: string | undefined;
  private index = 0;
  private current: Subject<EvoEvent> | undefined;

  constructor(private readonly options: Omit<RunOptions, 'prompt'>) {
    this.thread = options.resume;
  }

  /** A turn: emitted at once, complete once its run has completed and its process exited. */
  turn(prompt: string): Observable<ConversationTurn> {
    return new Observable<ConversationTurn>((subscriber) => {
      const events = new Subject<EvoEvent>();
      this.current = events;
      let exited = false;
      let completed = false;
      const next = () => {
        if (exited && completed) subscriber.complete();
      };
      subscriber.next({ prompt, index: this.index++, resume: this.thread, events$: events.asObservable() });
      const onExit = (info: ExitInfo) => {
        if (info.threadId !== undefined) this.thread = info.threadId;
        exited = true;
        this.options.onExit?.(info);
        next();
      };
      // run() throws at once for options it refuses (an empty prompt): that errors the conversation, and `tap` the turn.
      const subscription = run({ ...this.options, prompt, resume: this.thread, onExit }).subscribe({
        next: (event) => events.next(event),
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          events.complete();
          completed = true;
          next();
        },
      });
      return () => subscription.unsubscribe();
    });
  }

  /** Errors the turn in progress, if it has not ended. */
  fail(err: unknown): void {
    this.current?.error(err);
  }
}
