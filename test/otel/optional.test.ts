import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The TypeScript files of the other entries: everything shipped but `otel/`. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('@opentelemetry/api stays optional', () => {
  it('no other entry imports it, nor anything of otel/', () => {
    const files = [join(root, 'index.ts'), ...['src', 'operators', 'testing', 'viewer', 'bin'].flatMap(sources)];
    expect(files.length).toBeGreaterThan(30);
    const offenders = files.filter((file) => /from '(@opentelemetry\/|[./]+\/otel\/)/.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('is an optional peer dependency, never a dependency', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.peerDependenciesMeta['@opentelemetry/api']).toEqual({ optional: true });
    expect(pkg.peerDependencies['@opentelemetry/api']).toBeDefined();
    expect(Object.keys(pkg.dependencies).filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
  });
});
