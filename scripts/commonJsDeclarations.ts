// After tsc: a CommonJS-format twin (`.d.cts`) of each entry's declarations and of every declaration they reach.
// TypeScript's `node16` mode reads a `.d.ts` of this `"type": "module"` package as an ES module, which CommonJS code
// may not import (TS1479), though Node 20.19 and later `require()` the very same JavaScript. The `require` condition of
// each entry in package.json names its twin; the twins import one another, so no ES-module declaration is reached.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A relative specifier as declaration emit writes it, `'./x.js'` or `'../x.js'`, in either quote. */
const RELATIVE = /(['"])(\.{1,2}\/[^'"]*)\.js\1/g;

type Conditions = { require?: { types?: string } };

/** The `.d.ts` behind each entry's `require` types; an entry without them is a mistake in package.json. */
function entryDeclarations(): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, Conditions>;
  };
  return Object.entries(manifest.exports).map(([entry, conditions]) => {
    const twin = conditions.require?.types;
    if (!twin?.endsWith('.d.cts')) throw new Error(`package.json: exports["${entry}"] has no require.types .d.cts`);
    return join(root, twin.replace(/\.d\.cts$/, '.d.ts'));
  });
}

/** Writes the twin of one `.d.ts`, and returns the `.d.ts` files it imports. */
function writeTwin(declaration: string): string[] {
  const reached: string[] = [];
  const text = readFileSync(declaration, 'utf8').replace(RELATIVE, (_, quote: string, path: string) => {
    reached.push(join(dirname(declaration), `${path}.d.ts`));
    return `${quote}${path}.cjs${quote}`;
  });
  writeFileSync(declaration.replace(/\.d\.ts$/, '.d.cts'), text);
  return reached;
}

const pending = entryDeclarations();
const done = new Set<string>();
for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
  if (done.has(next)) continue;
  if (!existsSync(next)) throw new Error(`${relative(root, next)}: imported by a declaration, but not built`);
  done.add(next);
  pending.push(...writeTwin(next));
}
