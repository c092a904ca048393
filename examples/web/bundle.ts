// Bundles a page's TypeScript for the browser with esbuild, in memory.
import { build } from 'esbuild';

/**
 * One ES module for the browser from `entry` and everything it imports
 * (`evosci-rx/events` and `evosci-rx/operators` resolve to the built package:
 * run `npm run build` first). Fails if anything would pull in a Node built-in.
 */
export async function bundleForBrowser(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    sourcemap: 'inline',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const nodeOnly = Object.keys(result.metafile.inputs).filter(
    (input) => input.startsWith('node:') || /node_modules\/execa\//.test(input),
  );
  if (nodeOnly.length > 0) throw new Error(`${entry} pulls Node-only modules into the browser: ${nodeOnly.join(', ')}`);
  return result.outputFiles[0]!.text;
}
