// The `evosci-rx/viewer` entry: the live terminal view of a run. Node only.
export { initialView } from './initialView.js';
export { liveView } from './liveView.js';
export type { LiveViewOptions } from './LiveViewOptions.js';
export type { FrameSize } from './FrameSize.js';
export { renderFrame } from './renderFrame.js';
export { viewActions } from './viewActions.js';
export type { ViewAction } from './ViewAction.js';
export { reduceView } from './reduceView.js';
export type { ViewDelegation } from './ViewDelegation.js';
export type { ViewState } from './ViewState.js';
