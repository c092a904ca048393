import type { RunOptions } from './RunOptions.js';

/**
 * The CLI arguments of a run. Values are attached with `=` so that a prompt
 * or path starting with `-` cannot be read as an option by the CLI's parser.
 */
export function buildArgs(options: RunOptions): string[] {
  const args = [`--prompt=${options.prompt}`, '--output-format=stream-json'];
  if (options.workdir !== undefined) args.push(`--workdir=${options.workdir}`);
  if (options.autoMode === false) args.push('--no-auto-mode');
  if (options.resume !== undefined) args.push(`--resume=${options.resume}`);
  if (options.args) args.push(...options.args);
  return args;
}
