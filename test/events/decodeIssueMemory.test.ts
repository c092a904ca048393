// A DecodeIssue keeps the start of a bad line, never the line: a huge bad
// line is let go once the issue is all that is left of it.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DecodeIssue } from '../../src/events/errors.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** The issue of a bad line of 50 MB, built at run time as a decoded line is: a flat string of its own. */
function issueOfHugeLine(i: number): DecodeIssue {
  const line = `{"type": "tool_result", "content": "${String(i).repeat(50 * 1024 * 1024)}`;
  return new DecodeIssue(i + 1, line, 'not JSON');
}

describe('a DecodeIssue of a huge line', () => {
  it('holds a few hundred characters of it, not the line', () => {
    const before = heap();
    const issues: DecodeIssue[] = [];
    for (let i = 0; i < 4; i++) issues.push(issueOfHugeLine(i));
    const held = heap() - before;
    expect(issues.every((issue) => issue.raw.length === 300 && issue.raw.endsWith('…'))).toBe(true);
    // Four 50 MB lines: one kept would be 50 MB at least.
    expect(held).toBeLessThan(5 * 1024 * 1024);
  });
});
