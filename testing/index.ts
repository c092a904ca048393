// The `evosci-rx/testing` entry: helpers for testing code built on evosci-rx. Node only.
export { events } from './events.js';
export type { FakeStep } from './FakeStep.js';
export { fakeEvoSci } from './fakeEvoSci.js';
