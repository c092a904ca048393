/**
 * The `evosci-rx/flow` entry: a run's events under flow control, and as byte streams for HTTP (JSONL, SSE). No Node
 * built-ins: safe in a browser.
 *
 * @module evosci-rx/flow
 */
export { eachEvent, type EachEventOptions } from './eachEvent.js';
export { FlowControl } from '../common/FlowControl.js';
export type { FlowSource } from './ObservableByteSource.js';
export { toJsonlStream } from './toJsonlStream.js';
export { toSseStream, type SseOptions } from './toSseStream.js';
