import type { EvoEvent } from '../src/events.js';
import { outcomeOf } from '../operators/RunTally.js';
import type { RunOutcome } from '../operators/summarize.js';

/**
 * How a run is ending, by the rules `summarize()` states for `RunOutcome`:
 * an `error` event fails it, no `done` leaves it incomplete, and `done` right
 * after a question or approval that nothing went past means it needs input.
 * Also the main agent's token totals and its response.
 */
export class RunOutcomeTracker {
  inputTokens = 0;
  outputTokens = 0;
  response: string | undefined;
  /** The message of the first `error` event. */
  firstError: string | undefined;
  /** A question or approval the run has not gone past. */
  private waiting = false;

  push(event: EvoEvent): void {
    switch (event.type) {
      case 'usage_stats':
        this.inputTokens += event.input_tokens;
        this.outputTokens += event.output_tokens;
        return;
      case 'done':
        this.response = event.response;
        return;
      case 'error':
        this.firstError ??= event.message;
        return;
      case 'interrupt':
      case 'ask_user':
        this.waiting = true;
        return;
      case 'text':
      case 'tool_call':
      case 'tool_result':
      case 'subagent_tool_call':
      case 'subagent_tool_result':
        // The run went on: what it asked was answered.
        this.waiting = false;
        return;
      default:
        return;
    }
  }

  outcome(): RunOutcome {
    return outcomeOf(this.firstError !== undefined, this.response !== undefined, this.waiting);
  }
}
