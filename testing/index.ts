// The `evosci-rx/testing` entry: helpers for testing code built on evosci-rx. Node only.
export { events } from './events.js';
export { fakeEvoSci, type FakeStep } from './fakeEvoSci.js';
export { fakeRun, type FakeRun, type FakeRunOptions } from './fakeRun.js';
export { recordedRuns, type RecordedRun } from './recordedRuns.js';
export { withFakeRuns, type FakeCli, type FakeEvents, type FakeRunSource } from './withFakeRuns.js';
