import { filter, map, scan, type OperatorFunction } from 'rxjs';
import type { DoneEvent, EvoEvent, TextEvent, UnknownEvent } from '../src/events/codecs.js';

/**
 * The main agent's text once `done` has come: its response, except that an
 * empty one (a run that stopped to ask, or a producer that sends none) keeps
 * the streamed text.
 */
export function textAtDone(streamed: string, response: string): string {
  return response || streamed;
}

interface Text {
  text: string;
  changed: boolean;
}

/**
 * The main agent's running text: emitted after each `text` delta, and once
 * more with `done.response` when that arrives and differs (an empty one keeps
 * the streamed text). Both are the main agent's text of the whole run, its
 * narration between tool calls joined with its last words, not a separate
 * final answer; sub-agent text is not included.
 *
 * ```ts
 * run$.pipe(accumulateText()).subscribe((text) => (panel.textContent = text));
 * ```
 *
 * ```
 * source:           --t(He)--t(llo)--d(Hello!)--|
 * accumulateText(): --He-----Hello---Hello!-----|
 * ```
 */
export function accumulateText(): OperatorFunction<EvoEvent | UnknownEvent, string> {
  return (source) =>
    source.pipe(
      filter((event): event is TextEvent | DoneEvent => event.type === 'text' || event.type === 'done'),
      scan<TextEvent | DoneEvent, Text>(
        (state, event) => {
          const text = event.type === 'text' ? state.text + event.content : textAtDone(state.text, event.response);
          return { text, changed: event.type === 'text' || text !== state.text };
        },
        { text: '', changed: false },
      ),
      filter((state) => state.changed),
      map((state) => state.text),
    );
}
