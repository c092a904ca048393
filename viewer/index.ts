// The `evosci-rx/viewer` entry: the live terminal view of a run. Node only.
export { initialView } from './initialView.js';
export { liveView } from './liveView.js';
export type { LiveViewOptions } from './LiveViewOptions.js';
export { renderFrame, type FrameSize } from './renderFrame.js';
export { viewActions } from './viewActions.js';
export type { ViewAction } from './ViewAction.js';
export { reduceView } from './reduceView.js';
export type { ViewDelegation, ViewState } from './ViewState.js';
