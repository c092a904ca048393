import { EvoSciError } from './EvoSciError.js';

/** `RunOptions.signal` was aborted; the process was stopped. The abort reason is the `cause`. */
export class CancelledError extends EvoSciError {}
