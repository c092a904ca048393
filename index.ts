/**
 * The `evosci-rx` entry, for Node: runs, decoding, errors and operators.
 *
 * @module evosci-rx
 */
export * from './src/index.js';
export { run, type ExitInfo, type RunOptions } from './src/process/run.js';
export { converse, type ConversationTurn } from './src/process/converse.js';
export { fromJsonlFile } from './src/files/fromJsonlFile.js';
export * from './operators/index.js';
