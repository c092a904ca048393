// Every relative link of the front page and the guides leads somewhere: a file of the repository, and a heading
// of it when the link names one (`#anchor`, made from the heading as GitHub makes it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The API reference is built (`npm run docs`), not kept: a link into it names what the build writes. */
const apiOut = resolve(root, (JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { out: string }).out);

const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text of a page outside its fenced code blocks, line for line (a fenced line is left empty). */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** GitHub's anchor of a heading: its text as shown, lower-cased, punctuation dropped, spaces made dashes. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*|__/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page has: its headings' slugs, a repeated one numbered as GitHub numbers it (`-1`, `-2`…). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** The links of a page, outside code: `[text](target)` and images, with their line numbers. */
function links(text: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  prose(text).forEach((line, i) => {
    // Code spans hold no links; a link's text may be one.
    const plain = line.replace(/`[^`]*`/g, 'code');
    for (const m of plain.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ line: i + 1, target: m[1]! });
  });
  return found;
}

/** Why a link leads nowhere, or undefined when it leads somewhere. */
function broken(page: string, target: string): string | undefined {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return undefined; // https:, mailto: — outside the repository
  const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(path));
  if (!file.startsWith(root)) return 'leads out of the repository';
  if (file === apiOut || file.startsWith(apiOut + '/')) return undefined;
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md')) return `an anchor in ${relative(root, file)}, which is not a page`;
  return anchors(readFileSync(file, 'utf8')).has(anchor)
    ? undefined
    : `no heading #${anchor} in ${relative(root, file)}`;
}

describe('the links of the front page and the guides', () => {
  it('makes anchors as GitHub does', () => {
    expect(slug('Runs as resources: `evosci-rx/runs`')).toBe('runs-as-resources-evosci-rxruns');
    expect(slug('The runs handler (`runsHandler` of `evosci-rx/runs`)')).toBe(
      'the-runs-handler-runshandler-of-evosci-rxruns',
    );
    expect(slug('`for await`, with backpressure')).toBe('for-await-with-backpressure');
    expect(slug('An app pointed at the fake: `evosci-rx fake`')).toBe('an-app-pointed-at-the-fake-evosci-rx-fake');
    expect([...anchors('## Security\n\n```\n## not a heading\n```\n### Security\n')]).toEqual([
      'security',
      'security-1',
    ]);
  });

  it('has guides, each linked from the front page and the index', () => {
    expect(pages.length).toBeGreaterThan(10);
    const targets = (page: string) =>
      new Set(links(readFileSync(join(root, page), 'utf8')).map(({ target }) => target.split('#')[0]));
    const fromFront = targets('README.md');
    const fromIndex = targets('docs/README.md');
    const guides = pages.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md');
    expect(guides.filter((page) => !fromFront.has(page))).toEqual([]);
    expect(guides.filter((page) => !fromIndex.has(page.slice('docs/'.length)))).toEqual([]);
  });

  it.each(pages)('%s: every relative link and anchor resolves', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const bad = links(text).flatMap(({ line, target }) => {
      const why = broken(page, target);
      return why === undefined ? [] : [`${page}:${line} ${target}: ${why}`];
    });
    expect(bad).toEqual([]);
  });
});
