/**
 * The `evosci-rx/viewer` entry: the live terminal view of a run. Node only.
 *
 * @module evosci-rx/viewer
 */
export { liveView, type LiveViewOptions } from './liveView.js';
