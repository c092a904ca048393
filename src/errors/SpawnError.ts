import { EvoSciError } from './EvoSciError.js';

/** The process could not be started: missing binary, not executable, bad `cwd`. */
export class SpawnError extends EvoSciError {}
