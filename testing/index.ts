// The `evosci-rx/testing` entry: helpers for testing code built on evosci-rx. Node only.
export { events } from './events.js';
export { fakeEvoSci, type FakeStep } from './fakeEvoSci.js';
