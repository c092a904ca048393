import { createLogUpdate } from 'log-update';
import spinners from 'cli-spinners';
import pc from 'picocolors';
import type { Colors } from 'picocolors/types.js';
import { map, type Observable } from 'rxjs';
import { showControls } from '../src/common/terminalText.js';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import { viewActions, type RunSummary, type ViewAction } from '../operators/index.js';
import { ViewModel } from './model.js';
import { describeAction, formatting, renderFrame } from './render.js';

/** Options of `liveView`. */
export interface LiveViewOptions {
  /** Where to draw; default `process.stdout`. */
  readonly output?: NodeJS.WriteStream;
  /** Redraw in place with spinners; default: whether `output` is a TTY. Otherwise one line per finished step. */
  readonly interactive?: boolean;
  /** Print the run's error under the view before rejecting with it; default `true`. */
  readonly showErrors?: boolean;
  /**
   * Show how long each call took, as measured while the events arrive; default
   * `true`. A recorded transcript carries no times: reading it, leave them out.
   */
  readonly timed?: boolean;
}

/** The size a frame is drawn to when the terminal reports none. */
const USUAL_SIZE = { columns: 100, rows: 30 } as const;

/** The terminal's size; one that reports 0 × 0 (`script` with no size, some CI terminals) has the usual size. */
function sizeOf(output: NodeJS.WriteStream): { readonly columns: number; readonly rows: number } {
  return { columns: output.columns || USUAL_SIZE.columns, rows: output.rows || USUAL_SIZE.rows };
}

/**
 * `output` as log-update draws to it: its writes, and the size it clips the
 * frame to, which is `sizeOf` (log-update would clip a frame to 0 rows).
 * log-update reads nothing else of its stream.
 */
function sized(output: NodeJS.WriteStream): NodeJS.WritableStream {
  const view = {
    write: (text: string) => output.write(text),
    get columns() {
      return sizeOf(output).columns;
    },
    get rows() {
      return sizeOf(output).rows;
    },
  };
  return view as unknown as NodeJS.WritableStream;
}

/** A tool action without the end time its snapshot was given when read, so that no duration is shown. */
function untimed(action: ViewAction): ViewAction {
  return action.kind === 'tool' ? { ...action, invocation: { ...action.invocation, endedAt: undefined } } : action;
}

/**
 * Shows a run in the terminal until it ends, then prints the final response
 * and a summary line. Resolves with the run's summary, or rejects with the
 * run's error once it is shown. On a TTY the view is redrawn in place (tools
 * with spinners, the sub-agent tree, the streaming text, a token counter);
 * elsewhere each finished tool and sub-agent is one line.
 *
 * ```ts
 * await liveView(run({ prompt: 'Summarize attention into notes.md' }));
 * ```
 */
export function liveView(
  events$: Observable<EvoEvent | UnknownEvent>,
  options: LiveViewOptions = {},
): Promise<RunSummary | undefined> {
  const screen = new Screen(options);
  return new Promise((resolve, reject) => {
    const actions$ = events$.pipe(viewActions());
    (options.timed === false ? actions$.pipe(map(untimed)) : actions$).subscribe({
      next: (action) => screen.show(action),
      error: (err: unknown) => {
        screen.finish();
        if (options.showErrors ?? true) screen.error(err);
        // The run's own error, passed on as it came.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(err);
      },
      complete: () => {
        screen.finish();
        resolve(screen.state.summary);
      },
    });
  });
}

/** Where a live view draws: the model, and the terminal with its redraw timer or its plain lines. */
class Screen {
  readonly state = new ViewModel();
  private readonly output: NodeJS.WriteStream;
  private readonly c: Colors;
  private readonly log: ReturnType<typeof createLogUpdate> | undefined;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private tick = 0;

  constructor(options: LiveViewOptions) {
    this.output = options.output ?? process.stdout;
    // A dumb terminal takes no cursor movement and no colour: it gets the plain lines.
    const tty = Boolean(this.output.isTTY) && process.env['TERM'] !== 'dumb';
    // Colour for a terminal, or when asked for; not for a pipe, whatever picocolors guesses from CI.
    const env = process.env;
    this.c = pc.createColors(!('NO_COLOR' in env) && (tty || (env['FORCE_COLOR'] ?? '0') !== '0'));
    if (options.interactive ?? tty) {
      this.log = createLogUpdate(sized(this.output), { showCursor: false });
      this.timer = setInterval(() => this.draw(), spinners.dots.interval);
    }
  }

  show(action: ViewAction): void {
    this.state.apply(action);
    if (this.log) return;
    const line = describeAction(action, this.c, sizeOf(this.output).columns, this.state);
    if (line !== undefined) this.write(line);
  }

  /** The last frame, then the response, what the run waits for, and the summary line. */
  finish(): void {
    clearInterval(this.timer);
    if (this.log) {
      this.draw();
      this.log.done();
    }
    const { c, state } = this;
    const response = state.summary?.response ?? state.text;
    if (response) this.write(`\n${c.bold('Response')}\n${showControls(response, { keepNewlines: true })}\n`);
    if (state.summary?.outcome === 'needs-input') {
      const pending = formatting.pending(state.summary, c).join('\n');
      this.write(`${c.bold(c.yellow('Needs input'))}\n${pending}\n${c.dim(RESUME_NOTE)}\n`);
    }
    if (state.summary) this.write(c.dim(formatting.summaryLine(state.summary)));
  }

  error(err: unknown): void {
    this.write(
      this.c.red(`\n${showControls(err instanceof Error ? err.message : String(err), { keepNewlines: true })}`),
    );
  }

  private draw(): void {
    const { frames } = spinners.dots;
    this.log?.(renderFrame(this.state, this.c, frames[this.tick++ % frames.length]!, sizeOf(this.output)));
  }

  private write(line: string): void {
    this.output.write(`${line}\n`);
  }
}

/** What resuming does, said where a run stops to ask. */
const RESUME_NOTE =
  'A run that resumes this thread sends its prompt as a new message; the paused call itself gets no answer.';
