import { createReadStream } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { fromJsonl } from '/work/wt/bytes/src/index.js';
import { ToolCallTracker } from '/work/wt/bytes/operators/ToolCallTracker.js';
import { RunModel } from '/work/wt/bytes/operators/RunModel.js';
import { largeTranscript } from '/work/wt/bytes/test/fixtures/producer.js';
const t = largeTranscript({ mb: 100, mix: (process.argv[2] ?? 'bytes') as any });
const events: any[] = await lastValueFrom(fromJsonl(createReadStream(t.path, { highWaterMark: 1 << 20 })).pipe(toArray()));
const tools = events.filter((e) => /tool_(call|result)$/.test(e.type));
console.log(events.length, 'events', tools.length, 'tool events');
const cpu = (f: () => void) => { const c = process.cpuUsage(); f(); const d = process.cpuUsage(c); return ((d.user + d.system) / 1000).toFixed(1); };
for (let r = 0; r < 5; r++) {
  const a = cpu(() => { const tr = new ToolCallTracker(Date.now); for (const e of tools) tr.take(e); });
  const b = cpu(() => { const tr = new ToolCallTracker(Date.now); for (const e of events) if (e.type !== 'text') tr.take(e); });
  const c = cpu(() => { const m = new RunModel(Date.now, { summary: true }); for (const e of events) m.push(e); m.summary(); });
  const d = cpu(() => { let n = 0; for (const e of events) if (e.type === 'text') n++; });
  const s = cpu(() => { const set = new Set<string>(); for (const e of tools) { const k = `[null,null,"${e.id}"]`; if (!set.has(k)) set.add(k); } });
  console.log(`tracker(tools only) ${a}  tracker(all) ${b}  model ${c}  scan ${d}  set ${s}`);
}
