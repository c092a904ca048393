import { createLogUpdate } from 'log-update';
import spinners from 'cli-spinners';
import pc from 'picocolors';
import type { Observable } from 'rxjs';
import { showControls } from '../src/controls.js';
import type { EvoEvent, UnknownEvent } from '../src/events.js';
import type { RunSummary } from '../operators/summarize.js';
import { viewActions, ViewModel } from './model.js';
import { describeAction, formatting, renderFrame } from './render.js';

/** Options of `liveView`. */
export interface LiveViewOptions {
  /** Where to draw; default `process.stdout`. */
  readonly output?: NodeJS.WriteStream;
  /** Redraw in place with spinners; default: whether `output` is a TTY. Otherwise one line per finished step. */
  readonly interactive?: boolean;
  /** Print the run's error under the view before rejecting with it; default `true`. */
  readonly showErrors?: boolean;
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
  const output = options.output ?? process.stdout;
  const interactive = options.interactive ?? Boolean(output.isTTY);
  // Colour for a terminal, or when asked for; not for a pipe, whatever picocolors guesses from CI.
  const env = process.env;
  const c = pc.createColors(!('NO_COLOR' in env) && (Boolean(output.isTTY) || (env['FORCE_COLOR'] ?? '0') !== '0'));
  const write = (line: string) => output.write(`${line}\n`);
  const { frames, interval } = spinners.dots;
  const log = interactive ? createLogUpdate(output, { showCursor: false }) : undefined;
  const state = new ViewModel();
  let tick = 0;
  const draw = () =>
    log?.(
      renderFrame(state, c, frames[tick++ % frames.length]!, {
        columns: output.columns ?? 100,
        rows: output.rows ?? 30,
      }),
    );
  const timer = log ? setInterval(draw, interval) : undefined;

  const finish = () => {
    clearInterval(timer);
    if (log) {
      draw();
      log.done();
    }
    const response = state.summary?.response ?? state.text;
    if (response) write(`\n${c.bold('Response')}\n${showControls(response, true)}\n`);
    if (state.summary?.outcome === 'needs-input') {
      write(`${c.bold(c.yellow('Needs input'))}\n${formatting.pending(state.summary, c).join('\n')}\n`);
    }
    if (state.summary) write(c.dim(formatting.summaryLine(state.summary)));
  };

  return new Promise((resolve, reject) => {
    events$.pipe(viewActions()).subscribe({
      next: (action) => {
        state.apply(action);
        if (!log) {
          const line = describeAction(action, c, output.columns ?? 100, state);
          if (line !== undefined) write(line);
        }
      },
      error: (err: unknown) => {
        finish();
        if (options.showErrors ?? true) {
          write(c.red(`\n${showControls(err instanceof Error ? err.message : String(err), true)}`));
        }
        // The run's own error, passed on as it came.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(err);
      },
      complete: () => {
        finish();
        resolve(state.summary);
      },
    });
  });
}
