import { readFileSync } from 'node:fs';
import { largeTranscript } from '/work/wt/bytes/test/fixtures/producer.js';
const t = largeTranscript({ mb: 100, mix: (process.argv[2] ?? 'bytes') as any });
const lines = readFileSync(t.path, 'latin1').split('\n').filter(Boolean);
const by = new Map<string, string[]>();
for (const l of lines) { const ty = /"type": "(\w+)"/.exec(l)![1]!; (by.get(ty) ?? by.set(ty, []).get(ty)!).push(l); }
const cpu = (f: () => void) => { const c = process.cpuUsage(); f(); const d = process.cpuUsage(c); return (d.user + d.system) / 1000; };
for (let r = 0; r < 3; r++) {
  const row: string[] = [];
  for (const [ty, ls] of [...by].sort((a, b) => b[1].length * 0 + b[1].join('').length - a[1].join('').length).slice(0, 7)) {
    const ms = cpu(() => { for (const l of ls) JSON.parse(l); });
    row.push(`${ty} ${ms.toFixed(0)}ms/${(ls.reduce((s, l) => s + l.length, 0) / 1e6).toFixed(1)}MB`);
  }
  const re = /^(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*$/;
  const tr = by.get('tool_result')!;
  const contents = tr.map((l) => l.slice(l.indexOf('"content": "') + 12, l.lastIndexOf('", "success"')));
  row.push(`re ${cpu(() => { for (const c of contents) re.test(c); }).toFixed(0)}ms`);
  const re2 = /["\x00-\x1f]/;
  row.push(`re2 ${cpu(() => { for (const c of contents) re2.test(c); }).toFixed(0)}ms`);
  row.push(`parseStr ${cpu(() => { for (const c of contents) JSON.parse('"' + c + '"'); }).toFixed(0)}ms`);
  console.log(row.join(' | '));
}
