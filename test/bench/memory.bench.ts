/**
 * Peak memory of streaming decodes, each measured in a fresh child process
 * (`process.resourceUsage().maxRSS`), so one variant's heap cannot inflate
 * another's:
 *
 *   readline       readline + JSON.parse over the transcript, keeping nothing (the floor)
 *   operators      fromJsonl + pairToolCalls + sumUsage over the same file, one subscription
 *   summary        fromJsonlFile + summarize() over the same file (the summary keeps the run's text)
 *   one line       a single 50 MB `tool_result` line through fromJsonl
 *
 * Measures the built package (`npm run build` first; `npm run bench` does).
 *
 * ```bash
 * npx tsx test/bench/memory.bench.ts               # 400 MB transcript (generated once, cached)
 * npx tsx test/bench/memory.bench.ts --smoke       # 5 MB and a 5 MB line, for CI
 * ```
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DATA_DIR, largeTranscript } from '../fixtures/producer.js';

const MiB = 1 << 20;
const { values: flags } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    mb: { type: 'string' },
    'line-mb': { type: 'string' },
  },
});

interface Measure {
  events: number;
  seconds: number;
  maxRssMB: number;
}

/**
 * The measured program, run by plain `node` on the built package: a loader
 * such as tsx would add its own memory to every figure.
 */
function program(variant: string, file: string): string {
  const dist = (path: string) => JSON.stringify(new URL(`../../dist/${path}`, import.meta.url).href);
  const read = `createReadStream(${JSON.stringify(file)}, { highWaterMark: ${MiB} })`;
  const strict = `{ onDiagnostic: (i) => { throw new Error(String(i)); } }`;
  const bodies: Record<string, string> = {
    readline: `for await (const line of createInterface({ input: ${read}, crlfDelay: Infinity })) if (line && JSON.parse(line)) events++;`,
    operators: `events = await lastValueFrom(fromJsonl(${read}, ${strict}).pipe(
           connect((events$) => merge(events$.pipe(pairToolCalls()), events$.pipe(sumUsage()), events$)),
           reduce((n) => n + 1, 0)));`,
    summary: `events = (await lastValueFrom(fromJsonlFile(${JSON.stringify(file)}, ${strict}).pipe(summarize()))).events;`,
  };
  const body = bodies[variant]!;
  return `
    import { createReadStream } from 'node:fs';
    import { createInterface } from 'node:readline';
    import { connect, lastValueFrom, merge, reduce } from 'rxjs';
    import { fromJsonl } from ${dist('src/index.js')};
    import { fromJsonlFile } from ${dist('index.js')};
    import { pairToolCalls, sumUsage, summarize } from ${dist('operators/index.js')};
    const started = performance.now();
    let events = 0;
    ${body}
    process.stdout.write(JSON.stringify({ events, seconds: (performance.now() - started) / 1000, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
  `;
}

{
  const mb = Number(flags.mb ?? (flags.smoke ? 5 : 400));
  const lineMb = Number(flags['line-mb'] ?? (flags.smoke ? 5 : 50));
  const transcript = largeTranscript({ mb });
  const bigLine = join(DATA_DIR, `one-line-${lineMb}mb.jsonl`);
  if (!existsSync(bigLine)) {
    const content = 'r'.repeat(lineMb * 1_000_000);
    writeFileSync(
      bigLine,
      `{"type": "tool_result", "name": "read_file", "content": "${content}", "success": true, "id": "c1"}\n`,
    );
  }
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const child = (variant: string, file: string): Measure =>
    JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', program(variant, file)], {
        cwd: root,
        encoding: 'utf8',
      }),
    ) as Measure;

  const rows: [string, string, Measure][] = [
    [
      'readline + JSON.parse',
      `${(transcript.bytes / 1e6).toFixed(0)} MB transcript`,
      child('readline', transcript.path),
    ],
    [
      'fromJsonl + pairToolCalls + sumUsage',
      `${(transcript.bytes / 1e6).toFixed(0)} MB transcript`,
      child('operators', transcript.path),
    ],
    [
      'fromJsonlFile + summarize()',
      `${(transcript.bytes / 1e6).toFixed(0)} MB transcript`,
      child('summary', transcript.path),
    ],
    ['fromJsonl', `one ${lineMb} MB line`, child('operators', bigLine)],
  ];
  // Every operator emission is counted, so only the plain readline count is an event count.
  console.log(`peak RSS, each in its own process — ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}\n`);
  console.log('| variant | input | s | peak RSS MB |');
  console.log('|:--|:--|--:|--:|');
  for (const [name, input, m] of rows)
    console.log(`| ${name} | ${input} | ${m.seconds.toFixed(2)} | ${m.maxRssMB.toFixed(0)} |`);
  const streamed = rows[1]![2].maxRssMB;
  if (!flags.smoke) {
    console.log(
      `\ntarget: operators over the transcript < 200 MB peak RSS: ${streamed.toFixed(0)} MB — ${streamed < 200 ? 'met' : 'missed'}`,
    );
  }
}
