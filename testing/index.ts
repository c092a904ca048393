/**
 * The `evosci-rx/testing` entry: helpers for testing code built on evosci-rx. Node only.
 *
 * @module evosci-rx/testing
 */
export { events, type SubagentCallOptions } from './events.js';
export { fakeEvoSci, type FakeStep, type Pacing } from './fakeEvoSci.js';
export { fakeRun, type FakeRun, type FakeRunOptions } from './fakeRun.js';
export { recordedRuns, type RecordedRun } from './recordedRuns.js';
export { withFakeRuns, type FakeCli, type FakeEvents, type FakeRunSource } from './withFakeRuns.js';
