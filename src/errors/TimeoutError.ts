import { EvoSciError } from './EvoSciError.js';

/** `timeoutMs` elapsed before the run ended; the process was stopped. */
export class TimeoutError extends EvoSciError {}
