import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';

/** A TestScheduler that compares frames with vitest's deep equality. */
export function marbles(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}
