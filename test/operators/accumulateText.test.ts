import { describe, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { accumulateText } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = {
  a: ev.text('He'),
  b: ev.text('llo'),
  s: ev.subagentText('research-agent', 'not mine'),
  d: ev.done('Hello!'),
  D: ev.done('Hello'),
  u: ev.usage(1, 1),
};

describe('accumulateText', () => {
  it('emits the running main-agent text after each delta, and done.response when it differs', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-a-s-b-u-d-|', values);
      expectObservable(source.pipe(accumulateText())).toBe('-a---b---d-|', { a: 'He', b: 'Hello', d: 'Hello!' });
      expectSubscriptions(source.subscriptions).toBe('^----------!');
    });
  });

  it('does not repeat the text when done.response equals it', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-a-b-D-|', values).pipe(accumulateText())).toBe('-a-b---|', {
        a: 'He',
        b: 'Hello',
      });
    });
  });

  it('keeps the streamed text when done.response is empty', () => {
    marbles().run(({ cold, expectObservable }) => {
      const empty = ev.done('');
      expectObservable(cold<EvoEvent>('-a-b-e-|', { ...values, e: empty }).pipe(accumulateText())).toBe('-a-b---|', {
        a: 'He',
        b: 'Hello',
      });
    });
  });

  it('emits done.response alone when no delta came', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-u-d|', values).pipe(accumulateText())).toBe('---d|', { d: 'Hello!' });
    });
  });

  it('completes empty on an empty source', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('|').pipe(accumulateText())).toBe('|');
    });
  });

  it('passes errors on', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-a-#', values, new Error('x')).pipe(accumulateText())).toBe(
        '-a-#',
        { a: 'He' },
        new Error('x'),
      );
    });
  });

  it('unsubscribes from the source when unsubscribed early', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-a-b-d-|', values);
      expectObservable(source.pipe(accumulateText()), '^--!').toBe('-a--', { a: 'He' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('starts from empty text on each subscription', () => {
    marbles().run(({ cold, expectObservable }) => {
      const accumulated = cold<EvoEvent>('-a-b|', values).pipe(accumulateText());
      expectObservable(accumulated).toBe('-a-b|', { a: 'He', b: 'Hello' });
      expectObservable(accumulated).toBe('-a-b|', { a: 'He', b: 'Hello' });
    });
  });
});
