// `examples/tracing.ts --demo` (npm run demo:trace) as a user runs it: the demo run's waterfall on stdout.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fixtureTruth } from '../support/collect.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const truth = fixtureTruth<{ invocations: unknown[]; delegations: unknown[] }>('examples/transcripts/demo-run.jsonl');

describe('examples/tracing.ts', () => {
  it('prints the span tree of the demo run as an indented waterfall with durations', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, EVOSCI_RX_FAKE: '1' };
    delete env['OTEL_EXPORTER_OTLP_ENDPOINT'];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/tracing.ts', '--demo', '--speed', '20'],
      { cwd: root, env },
    );
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^✓ invoke_agent EvoScientist +\|█+\| [\d.]+ m?s$/);
    const spans = lines.slice(0, -1);
    for (const line of spans)
      expect(line).toMatch(/^( {2})*[✓✗…∅] (invoke_agent|execute_tool) .* \|[ █]+\| [\d.]+ m?s$/);
    expect(spans.filter((l) => l.includes('execute_tool'))).toHaveLength(truth.invocations.length);
    expect(spans.filter((l) => /^ {4}✓ invoke_agent research-agent/.test(l))).toHaveLength(2);
    expect(spans).toContain(spans.find((l) => /^ {2}✗ execute_tool execute/.test(l)));
    expect(lines.at(-1)).toMatch(/^completed · /);
  });
});
