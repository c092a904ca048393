import { EvoSciError } from './EvoSciError.js';

/** The process exited 0 without sending a `done` event. */
export class TruncatedStreamError extends EvoSciError {}
