// Every unit small enough to hold in one's head: no function of the library's own code over 60 lines, no
// class over 250.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT = 60;
const CLASS_LIMIT = 250;

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** Each function, method and arrow function of a file (or each class), with its length in lines. */
function unitsOf(path: string, kind: 'function' | 'class'): { where: string; lines: number }[] {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { where: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    const counted =
      kind === 'class' ? ts.isClassLike(node) : ts.isFunctionLike(node) && 'body' in node && node.body !== undefined;
    if (counted) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as { name?: ts.Node }).name?.getText(file) ?? '(anonymous)';
      found.push({ where: `${relative(root, path)}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Every file of the library's own code. */
const libraryFiles = ['index.ts', 'src', 'operators', 'otel', 'viewer', 'testing', 'bin'].flatMap((part) => {
  const path = join(root, part);
  return statSync(path).isDirectory() ? [...sourceFiles(path)] : [path];
});

describe('the shape of the code', () => {
  it(`has no function over ${LIMIT} lines in the library`, () => {
    const all = libraryFiles.flatMap((path) => unitsOf(path, 'function'));
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((f) => f.lines > LIMIT).map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
  });

  it(`has no class over ${CLASS_LIMIT} lines in the library`, () => {
    const all = libraryFiles.flatMap((path) => unitsOf(path, 'class'));
    expect(all.length).toBeGreaterThan(30);
    expect(all.filter((c) => c.lines > CLASS_LIMIT).map((c) => `${c.where} (${c.lines} lines)`)).toEqual([]);
  });
});
