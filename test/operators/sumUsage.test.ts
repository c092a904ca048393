import { describe, it } from 'vitest';
import { last } from 'rxjs';
import type { EvoEvent } from '../../index.js';
import { sumUsage } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = { u: ev.usage(100, 20), v: ev.usage(5, 1), t: ev.text('x') };
const totals = {
  a: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
  b: { inputTokens: 105, outputTokens: 21, totalTokens: 126 },
};

describe('sumUsage', () => {
  it('emits running totals after each usage_stats event', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-u-t-v-|', values);
      expectObservable(source.pipe(sumUsage())).toBe('-a---b-|', totals);
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('gives zero totals at completion for a source without usage, so that last() has a value', () => {
    marbles().run(({ cold, expectObservable }) => {
      const zero = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
      expectObservable(cold<EvoEvent>('-t-|', values).pipe(sumUsage())).toBe('---(z|)', { z: zero });
      expectObservable(cold<EvoEvent>('--|').pipe(sumUsage(), last())).toBe('--(z|)', { z: zero });
    });
  });

  it('passes errors on', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-u-#', values).pipe(sumUsage())).toBe('-a-#', totals);
    });
  });

  it('unsubscribes from the source when unsubscribed early', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-u-v-|', values);
      expectObservable(source.pipe(sumUsage()), '^-!').toBe('-a-', totals);
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('starts from zero on each subscription', () => {
    marbles().run(({ cold, expectObservable }) => {
      const summed = cold<EvoEvent>('-u-v-|', values).pipe(sumUsage());
      expectObservable(summed).toBe('-a-b-|', totals);
      expectObservable(summed).toBe('-a-b-|', totals);
    });
  });
});
