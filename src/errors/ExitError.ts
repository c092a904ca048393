import { EvoSciError } from './EvoSciError.js';

/** The process exited with a non-zero status or was killed by a signal. */
export class ExitError extends EvoSciError {}
