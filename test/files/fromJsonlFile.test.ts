import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { take, tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, fromJsonlFile } from '../../index.js';
import { collect, fixtureBytes } from '../support/collect.js';
import { eventually, scratch } from '../support/processes.js';

const path = scratch();
const MiB = 1 << 20;

/** Whether this process holds `file` open (Linux: its descriptors under /proc). */
function holdsOpen(file: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  });
}

/**
 * A transcript of several read blocks: raw UTF-8 with CRLF, lines and
 * characters across every block boundary, and one line longer than a block.
 */
function manyBlocks(): string {
  const run = new TextDecoder().decode(fixtureBytes('research-run.utf8-crlf.jsonl'));
  const long = `{"type": "text", "content": "${'€x'.repeat(0.7 * MiB)}"}\r\n`;
  return run.repeat(60) + long + run.repeat(60);
}

describe('fromJsonlFile', () => {
  it('decodes a file read in blocks into one reused buffer as fromJsonl decodes its text', async () => {
    const text = manyBlocks();
    const file = path('many-blocks.jsonl');
    writeFileSync(file, text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * MiB);
    const events = await collect(fromJsonlFile(file));
    expect(events).toEqual(await collect(fromJsonl(text)));
    expect(events.some((e) => e.type === 'text' && e.content.length > MiB)).toBe(true);
  });

  it.runIf(process.platform === 'linux')(
    'closes the file at the end, and when the subscriber leaves early',
    async () => {
      const file = path('closes.jsonl');
      writeFileSync(file, manyBlocks());
      await collect(fromJsonlFile(file));
      expect(await eventually(() => !holdsOpen(file))).toBe(true);
      let openWhileRead = false;
      const first = await collect(
        fromJsonlFile(file).pipe(
          take(1),
          tap(() => (openWhileRead = holdsOpen(file))),
        ),
      );
      expect([first.length, openWhileRead]).toEqual([1, true]);
      expect(await eventually(() => !holdsOpen(file))).toBe(true);
    },
  );
});
