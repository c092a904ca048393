// The library's layers, read from its own imports: the browser entries reach
// no Node built-in, no import runs back up a layer, and no files import each
// other in a circle (type imports included: a circle of types is a circle of
// concepts all the same).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PARTS = ['index.ts', 'src', 'operators', 'otel', 'viewer', 'testing', 'bin'];

/**
 * Each place's layer: a file may import from its own layer and those below.
 * The longest prefix of a path names its place.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['src/common/', 'src/events/codecs.ts', 'src/events/errors.ts'],
  ['src/events/decode/'],
  ['src/events/index.ts'],
  ['src/process/', 'src/files/', 'src/flow/', 'operators/'],
  ['src/runs/', 'viewer/', 'testing/'],
  // The jetstream entry by role: names and codecs, then reading, writing, the worker, and the calls over them.
  ['src/jetstream/wire/'],
  ['src/jetstream/read/'],
  ['src/jetstream/write/'],
  ['src/jetstream/worker/'],
  ['src/jetstream/', 'otel/', 'bin/'],
  ['src/index.ts', 'index.ts'],
];

/** Folders whose files the rest of the library reaches only through the folder's face, its `index.ts`. */
const FACED = ['operators/'];

/** The entries a browser loads: what they reach at run time takes nothing from Node. */
const BROWSER_ENTRIES = ['src/index.ts', 'src/flow/index.ts', 'operators/index.ts'];
const NODE_ONLY_PACKAGES = ['execa', '@nats-io/transport-node'];

interface Import {
  readonly specifier: string;
  /** Erased from the JavaScript: `import type`, `export type`, or every name of it a type. */
  readonly typeOnly: boolean;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return clause !== undefined && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((e) => e.isTypeOnly)
  );
}

function importsOf(path: string): Import[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      found.push({ specifier: (node.moduleSpecifier as ts.StringLiteral).text, typeOnly: isTypeOnly(node) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) found.push({ specifier: arg.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The repository path a relative import names, `.js` read as the `.ts` it is built from. */
function resolved(from: string, specifier: string): string {
  return relative(root, join(dirname(join(root, from)), specifier)).replace(/\.js$/, '.ts');
}

/** Every library file, with the library files and the packages it imports. */
function graph(): Map<string, { files: Import[]; packages: Import[] }> {
  const files = PARTS.flatMap((part) => {
    const path = join(root, part);
    return statSync(path).isDirectory() ? [...sourceFiles(path)] : [path];
  });
  const edges = new Map<string, { files: Import[]; packages: Import[] }>();
  for (const path of files) {
    const from = relative(root, path);
    const all = importsOf(path);
    edges.set(from, {
      files: all
        .filter((i) => i.specifier.startsWith('.'))
        .map((i) => ({ ...i, specifier: resolved(from, i.specifier) })),
      packages: all.filter((i) => !i.specifier.startsWith('.')),
    });
  }
  return edges;
}

function layerOf(path: string): number {
  let best = { layer: -1, length: -1 };
  LAYERS.forEach((places, layer) => {
    for (const place of places) {
      const matches = place.endsWith('/') ? path.startsWith(place) : path === place;
      if (matches && place.length > best.length) best = { layer, length: place.length };
    }
  });
  return best.layer;
}

/** A circle of imports, as the files on it, or `undefined`. */
function firstCircle(edges: ReadonlyMap<string, { files: Import[] }>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file)?.files ?? []) {
      const circle = visit(next.specifier);
      if (circle) return circle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of edges.keys()) {
    const circle = visit(file);
    if (circle) return circle;
  }
  return undefined;
}

describe('the boundaries of the library', () => {
  const edges = graph();

  it('places every library file in a layer', () => {
    expect(edges.size).toBeGreaterThan(100);
    expect([...edges.keys()].filter((file) => layerOf(file) < 0)).toEqual([]);
  });

  it('has no import that runs back up a layer', () => {
    const upward = [...edges].flatMap(([from, { files }]) =>
      files.filter((i) => layerOf(i.specifier) > layerOf(from)).map((i) => `${from} → ${i.specifier}`),
    );
    expect(upward).toEqual([]);
  });

  it('reaches the operators only through their public entry', () => {
    const behind = [...edges].flatMap(([from, { files }]) =>
      files
        .filter((i) =>
          FACED.some((f) => i.specifier.startsWith(f) && !from.startsWith(f) && i.specifier !== `${f}index.ts`),
        )
        .map((i) => `${from} → ${i.specifier}`),
    );
    expect(behind).toEqual([]);
  });

  it('has no circle of imports', () => {
    expect(firstCircle(edges)).toBeUndefined();
  });

  it('keeps Node built-ins and Node-only packages out of what the browser entries load', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const i of edges.get(file)?.files ?? []) if (!i.typeOnly) visit(i.specifier);
    };
    for (const entry of BROWSER_ENTRIES) visit(entry);
    const nodeOnly = (name: string) =>
      name.startsWith('node:') || builtinModules.includes(name) || NODE_ONLY_PACKAGES.includes(name);
    const found = [...reached].flatMap((file) =>
      (edges.get(file)?.packages ?? [])
        .filter((i) => !i.typeOnly && nodeOnly(i.specifier))
        .map((i) => `${file} → ${i.specifier}`),
    );
    expect(reached.size).toBeGreaterThan(20);
    expect(found).toEqual([]);
  });
});
