// The `evosci-rx` entry, for Node: runs, decoding, errors and operators.
export * from './src/index.js';
export { run, type ExitInfo, type RunOptions } from './src/process/run.js';
export * from './operators/index.js';
