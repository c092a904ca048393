/**
 * Writes a large, realistic stream-json transcript for the decoding benchmark.
 *
 * The lines are what the EvoScientist producer writes (see
 * shared/protocol/producer-behaviour.md): Python `json.dumps(event)` with its
 * defaults, i.e. `", "` / `": "` separators and `ensure_ascii=True` (every
 * non-ASCII character as a lowercase `\uXXXX` escape, astral characters as
 * surrogate pairs, DEL as `\u007f`), keys in insertion order, one event a line,
 * `\n` line ends.
 *
 * Each turn: one `thinking` event, ~60 `text` deltas of a few characters
 * (never whitespace-only), a few `tool_call`s sent first with partial args,
 * the turn's `usage_stats`, then each call re-sent complete and followed by
 * its `tool_result` (a few KB; main-agent results cut at the producer's 2000
 * characters and marked `... (truncated)`). Every few turns one call is a
 * delegation: `task` tool_call, `subagent_start` (sometimes first with the
 * `sub-agent` placeholder), `subagent_tool_call` (partial, then complete) /
 * `subagent_tool_result`, `subagent_text` with `instance_id`, the `task`
 * `tool_result`, `subagent_end`. The run opens with `tool_selection` and ends
 * with `done`, whose `content` and `response` are the text of the last turns.
 *
 * Deterministic: a seeded PRNG drives everything, so the same size and seed
 * give the same bytes. The file is cached under `test/bench/.data/` (gitignored)
 * and reused when one of the same size, seed and format version exists.
 *
 * ```bash
 * npx tsx test/bench/generateTranscript.ts --mb 100
 * ```
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Where transcripts are cached (gitignored). */
export const DATA_DIR = fileURLToPath(new URL('./.data/', import.meta.url));

/** Bump when the generated content changes, so stale cached files are not reused. */
const FORMAT_VERSION = 2;
const MB = 1_000_000;
/** EvoScientist `DisplayLimits.TOOL_RESULT_MAX`: main-agent tool results are cut there. */
const TOOL_RESULT_MAX = 2000;
const TRUNCATED = '\n... (truncated)';

export interface TranscriptOptions {
  /** Approximate size in MB (10^6 bytes); default 100. The run stops at the first turn boundary past it, then `done`. */
  readonly mb?: number;
  /** PRNG seed; default 1. */
  readonly seed?: number;
  /** Directory to write to; default `test/bench/.data/`. */
  readonly dir?: string;
}

export interface TranscriptInfo {
  readonly path: string;
  readonly bytes: number;
  /** Number of lines = number of events (every line is one known event). */
  readonly events: number;
  readonly countsByType: Readonly<Record<string, number>>;
  /** True when a cached file was reused. */
  readonly reused: boolean;
}

// --- Python json.dumps(obj) -------------------------------------------------------

const NON_ASCII = /[\u007f-\uffff]/g;
const uEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * `json.dumps(value)` with Python's defaults. `JSON.stringify` already writes
 * the same escapes for `"`, `\`, `\b\f\n\r\t`, other control characters
 * (`\u00XX`, lowercase) and lone surrogates; what is left is ensure_ascii: each
 * UTF-16 unit from U+007F up becomes `\uXXXX`, which turns an astral
 * character into its surrogate pair, as Python does.
 */
export function pyDumps(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value).replace(NON_ASCII, uEscape);
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('pyDumps: only integers (float repr differs between Python and JS)');
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${value.map(pyDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) parts.push(`${pyDumps(k)}: ${pyDumps(v)}`);
    return parts.length === 0 ? '{}' : `{${parts.join(', ')}}`;
  }
  throw new Error(`pyDumps: unsupported ${typeof value}`);
}

// --- seeded randomness ----------------------------------------------------------

/** mulberry32: small, fast, good enough for test data. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

// --- vocabulary --------------------------------------------------------------------

const EN = (
  'the model attention layer sparse dense retrieval benchmark recall precision dataset training ' +
  'evaluation baseline results we observe that this method improves over previous work on long context ' +
  'tokens kernel memory throughput latency GPU batch size learning rate schedule warmup ablation study ' +
  'shows a small but consistent gain across all languages and tasks with fewer parameters than ' +
  'transformer encoder decoder embedding reranker index query passage corpus split validation test ' +
  'checkpoint loss curve converges after epochs scaling law compute budget experiment notes report'
).split(' ');
const FR = (
  "l'évaluation du modèle montre une amélioration nette sur le corpus français ; les résultats " +
  'détaillés sont écrits dans le rapport — prochaine étape : vérifier la généralisation à grande ' +
  "échelle avec un budget réduit ; c'est déjà très encourageant pour la récupération dense"
).split(' ');
const CJK = [
  '多语言检索',
  '稀疏注意力',
  '評価結果',
  '日本語の質問',
  '中文语料',
  '再ランキング',
  '实验记录',
  '東京の人口は？',
  '稀疏检索 混合',
];
const EMOJI = ['🚀', '✅', '📊', '🔍', '🧪', '⚠️', '𠮷'];
const TOOLS = ['tavily_search', 'read_file', 'write_file', 'execute', 'write_todos', 'ls', 'edit_file'] as const;
const AGENTS = ['research-agent', 'code-agent', 'planner-agent', 'data-analysis-agent', 'writing-agent'];
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

type Lang = 'en' | 'fr' | 'cjk';

class Content {
  constructor(private readonly rng: Rng) {}

  lang(): Lang {
    const x = this.rng.next();
    return x < 0.7 ? 'en' : x < 0.9 ? 'fr' : 'cjk';
  }

  /** Prose of about `chars` characters in one language, with the odd emoji. */
  prose(chars: number, lang: Lang = this.lang()): string {
    const { rng } = this;
    let out = '';
    while (out.length < chars) {
      if (lang === 'cjk')
        out += rng.chance(0.3) ? `${rng.pick(EN)} ` : `${rng.pick(CJK)}${rng.pick(['，', '。', ' ', '、'])}`;
      else out += `${rng.pick(lang === 'fr' ? FR : EN)}${rng.chance(0.08) ? rng.pick([', ', '. ', ' — ', ': ']) : ' '}`;
      if (rng.chance(0.01)) out += `${rng.pick(EMOJI)} `;
    }
    return out.trimEnd();
  }

  /**
   * Streamed deltas of `text`, `lo`..`hi` code points each (Python slices code
   * points, so a surrogate pair is never split); whitespace-only deltas are not sent.
   */
  deltas(text: string, lo: number, hi: number): string[] {
    const chars = Array.from(text);
    const out: string[] = [];
    let i = 0;
    while (i < chars.length) {
      let j = Math.min(chars.length, i + this.rng.int(lo, hi));
      while (j < chars.length && chars.slice(i, j).join('').trim() === '') j++;
      const piece = chars.slice(i, j).join('');
      if (piece.trim() === '' && out.length > 0) out[out.length - 1] += piece;
      else out.push(piece);
      i = j;
    }
    return out;
  }

  callId(): string {
    let s = 'toolu_01';
    for (let i = 0; i < 22; i++) s += B62[this.rng.int(0, 61)];
    return s;
  }

  instanceId(): string {
    const h = (n: number): string => {
      let s = '';
      for (let i = 0; i < n; i++) s += HEX[this.rng.int(0, 15)];
      return s;
    };
    return `tools:${h(8)}-${h(4)}-${h(4)}-${h(4)}-${h(12)}`;
  }

  path(): string {
    const { rng } = this;
    return `/${rng.pick(['data', 'scripts', 'notes', 'src', 'results'])}/${rng.pick(['eval', 'train', 'miracl', 'report', 'stats', 'utils'])}_${rng.int(1, 99)}.${rng.pick(['py', 'md', 'csv', 'json', 'txt'])}`;
  }

  /** `read_file` output: numbered source lines with tabs and quotes. */
  sourceFile(chars: number): string {
    const { rng } = this;
    const lines: string[] = [];
    let len = 0;
    for (let n = 1; len < chars; n++) {
      const indent = '    '.repeat(rng.int(0, 3));
      const line = rng.pick([
        () => `${indent}def ${rng.pick(EN)}_${rng.pick(EN)}(x, k=${rng.int(1, 64)}):`,
        () => `${indent}return torch.${rng.pick(['matmul', 'softmax', 'topk', 'cat'])}(x, dim=-1)`,
        () => `${indent}logger.info("${rng.pick(EN)} ${rng.pick(EN)}: %s", ${rng.pick(EN)})`,
        () => `${indent}# ${this.prose(rng.int(20, 70))}`,
        () =>
          `${indent}${rng.pick(EN)} = {'${rng.pick(EN)}': ${rng.int(0, 999)}, "lang": '${rng.pick(['fr', 'ja', 'zh'])}'}`,
        () => '',
      ])();
      const numbered = `${String(n).padStart(6)}\t${line}`;
      lines.push(numbered);
      len += numbered.length + 1;
    }
    return lines.join('\n');
  }

  /** `tavily_search` output: a JSON document inside the string (escaped twice on the wire). */
  searchResults(chars: number): string {
    const { rng } = this;
    const results: object[] = [];
    let len = 0;
    while (len < chars) {
      const r = {
        title: this.prose(rng.int(20, 60)),
        url: `https://arxiv.org/abs/24${String(rng.int(1, 12)).padStart(2, '0')}.${rng.int(10000, 99999)}`,
        content: this.prose(rng.int(150, 500)),
        score: rng.int(1, 999),
      };
      results.push(r);
      len += JSON.stringify(r).length;
    }
    return pyDumps({ query: this.prose(30), results });
  }

  /** `execute` output: a table or a log. */
  commandOutput(chars: number): string {
    const { rng } = this;
    const rows = ['lang,qid,question,recall@10,ndcg@10'];
    let len = 0;
    while (len < chars) {
      const row = rng.chance(0.5)
        ? `${rng.pick(['fr', 'ja', 'zh', 'es', 'de'])},${rng.int(1000, 9999)},"${this.prose(rng.int(15, 50))}",0.${rng.int(10, 99)},0.${rng.int(10, 99)}`
        : `[${rng.int(0, 23)}:${rng.int(10, 59)}:${rng.int(10, 59)}] step ${rng.int(1, 9999)} loss=${rng.int(1, 9)}.${rng.int(100, 999)} lr=3e-4`;
      rows.push(row);
      len += row.length + 1;
    }
    return rows.join('\n');
  }

  /** A tool's complete args and the full (uncut) text of its result. */
  tool(name: (typeof TOOLS)[number]): { args: Record<string, unknown>; result: string; ok: boolean } {
    const { rng } = this;
    const big = (): number => rng.int(1000, 5000);
    switch (name) {
      case 'tavily_search':
        return {
          args: { query: this.prose(rng.int(20, 70)), max_results: rng.int(3, 8) },
          result: this.searchResults(big()),
          ok: true,
        };
      case 'read_file':
        return { args: { file_path: this.path() }, result: this.sourceFile(big()), ok: true };
      case 'execute': {
        const ok = rng.chance(0.85);
        const result = ok
          ? this.commandOutput(big())
          : `Traceback (most recent call last):\n  File "/workspace/scripts/eval.py", line ${rng.int(1, 300)}, in <module>\n    import faiss\nModuleNotFoundError: No module named 'faiss'\n[Command failed with exit code 1]`;
        return {
          args: { command: `python scripts/${rng.pick(EN)}.py --langs fr,ja,zh --k ${rng.int(1, 100)}` },
          result,
          ok,
        };
      }
      case 'write_file': {
        const file_path = this.path();
        return {
          args: { file_path, content: this.sourceFile(rng.int(300, 2000)) },
          result: `Updated file ${file_path}`,
          ok: true,
        };
      }
      case 'edit_file': {
        const file_path = this.path();
        return {
          args: { file_path, old_string: this.prose(rng.int(20, 120)), new_string: this.prose(rng.int(20, 120)) },
          result: `Successfully replaced 1 instance(s) of the string in '${file_path}'`,
          ok: true,
        };
      }
      case 'ls':
        return {
          args: { path: '/' },
          result: `[${Array.from({ length: rng.int(3, 30) }, () => `'${this.path()}'`).join(', ')}]`,
          ok: true,
        };
      case 'write_todos': {
        const todos = Array.from({ length: rng.int(2, 6) }, () => ({
          content: this.prose(rng.int(15, 50)),
          status: rng.pick(['pending', 'in_progress', 'completed']),
        }));
        return { args: { todos }, result: `Updated todo list to ${pyDumps(todos).slice(0, 200)}`, ok: true };
      }
    }
  }

  /** What the producer sends before the args are complete: `{}` or the first string field cut short. */
  partial(args: Record<string, unknown>): Record<string, unknown> {
    const first = Object.entries(args)[0];
    if (first === undefined || this.rng.chance(0.5)) return {};
    const [key, value] = first;
    return typeof value === 'string'
      ? {
          [key]: Array.from(value)
            .slice(0, Math.max(1, value.length >> 1))
            .join(''),
        }
      : {};
  }
}

// --- the run -----------------------------------------------------------------------

type Event = Record<string, unknown> & { type: string };

interface Call {
  readonly name: string;
  readonly id: string;
  readonly args: Record<string, unknown>;
  readonly result: string;
  readonly ok: boolean;
}

/** Emits the events of a run, turn by turn. */
class RunModel {
  private readonly c: Content;
  private readonly text: string[] = [];
  private turnNo = 0;
  private nextDelegation: number;

  constructor(
    private readonly rng: Rng,
    private readonly emit: (event: Event) => void,
  ) {
    this.c = new Content(rng);
    this.nextDelegation = rng.int(2, 5);
  }

  start(): void {
    this.emit({ type: 'tool_selection', tools: [...TOOLS, 'task'] });
  }

  turn(): void {
    const { rng, c } = this;
    this.turnNo++;
    const lang = c.lang();
    this.emit({ type: 'thinking', content: c.prose(rng.int(80, 600), 'en'), id: 0 });
    // ~60 deltas of 2..7 code points: about 270 characters of text.
    const say = `${this.turnNo > 1 ? '\n\n' : ''}${c.prose(rng.int(200, 340), lang)}`;
    this.text.push(say);
    for (const delta of c.deltas(say, 2, 7)) this.emit({ type: 'text', content: delta });

    const calls: Call[] = Array.from({ length: rng.int(1, 4) }, () => {
      const name = rng.pick(TOOLS);
      return { name, id: c.callId(), ...c.tool(name) };
    });
    const delegate = this.turnNo >= this.nextDelegation;
    if (delegate) this.nextDelegation = this.turnNo + rng.int(2, 5);

    for (const call of calls)
      this.emit({ type: 'tool_call', name: call.name, args: c.partial(call.args), id: call.id });
    let task: Call | undefined;
    if (delegate) task = this.openDelegation();
    this.emit({
      type: 'usage_stats',
      input_tokens: 8000 + this.turnNo * 37 + rng.int(0, 3000),
      output_tokens: rng.int(40, 900),
    });

    for (const call of calls) {
      this.emit({ type: 'tool_call', name: call.name, args: call.args, id: call.id });
      let content = call.result;
      if (content.length > TOOL_RESULT_MAX) content = content.slice(0, TOOL_RESULT_MAX) + TRUNCATED;
      this.emit({ type: 'tool_result', name: call.name, content, success: call.ok, id: call.id });
    }
    if (task) this.runDelegation(task);
  }

  private agent = '';
  private description = '';

  /** The `task` call and `subagent_start` (sometimes a placeholder first). */
  private openDelegation(): Call {
    const { rng, c } = this;
    this.agent = rng.pick(AGENTS);
    this.description = c.prose(rng.int(40, 160));
    const task: Call = {
      name: 'task',
      id: c.callId(),
      args: { subagent_type: this.agent, description: this.description },
      result: c.prose(rng.int(200, 1200)),
      ok: true,
    };
    if (rng.chance(0.3)) {
      const short = Array.from(this.description).slice(0, 28).join('');
      this.emit({ type: 'tool_call', name: 'task', args: { description: short }, id: task.id });
      this.emit({ type: 'subagent_start', name: 'sub-agent', description: short });
      this.emit({ type: 'tool_call', name: 'task', args: task.args, id: task.id });
    } else {
      this.emit({ type: 'tool_call', name: 'task', args: task.args, id: task.id });
    }
    this.emit({ type: 'subagent_start', name: this.agent, description: this.description });
    return task;
  }

  /** The sub-agent's tool calls and text, then the `task` result and `subagent_end`. */
  private runDelegation(task: Call): void {
    const { rng, c, agent } = this;
    const instance_id = c.instanceId();
    const steps = rng.int(2, 4);
    for (let s = 0; s < steps; s++) {
      const name = rng.pick(TOOLS);
      const call: Call = { name, id: c.callId(), ...c.tool(name) };
      this.emit({ type: 'subagent_tool_call', subagent: agent, name, args: c.partial(call.args), id: call.id });
      this.emit({ type: 'subagent_tool_call', subagent: agent, name, args: call.args, id: call.id });
      this.emit({
        type: 'subagent_tool_result',
        subagent: agent,
        name,
        content: call.result,
        success: call.ok,
        id: call.id,
      });
      for (const delta of c.deltas(c.prose(rng.int(100, 400)), 12, 40)) {
        this.emit({ type: 'subagent_text', subagent: agent, content: delta, instance_id });
      }
    }
    this.emit({ type: 'tool_call', name: 'task', args: task.args, id: task.id });
    this.emit({ type: 'tool_result', name: 'task', content: task.result, success: true, id: task.id });
    this.emit({ type: 'subagent_end', name: agent });
  }

  end(): void {
    // The final message, as the producer's `done.response` is: not every delta of the run.
    const response = this.text.slice(-3).join('');
    this.emit({ type: 'done', content: response, response });
  }
}

// --- the file ------------------------------------------------------------------------

function fileFor(mb: number, seed: number, dir: string): string {
  return join(dir, `transcript-${mb}mb-seed${seed}-v${FORMAT_VERSION}.jsonl`);
}

/**
 * Writes (or reuses) a transcript of about `mb` MB and returns where it is.
 * The file is written to a temporary name and renamed when complete, so an
 * interrupted run never leaves a truncated file to be reused.
 */
export function generateTranscript(options: TranscriptOptions = {}): TranscriptInfo {
  const mb = options.mb ?? 100;
  const seed = options.seed ?? 1;
  const dir = options.dir ?? DATA_DIR;
  if (!(mb > 0)) throw new Error(`generateTranscript: mb must be > 0, got ${mb}`);
  const path = fileFor(mb, seed, dir);
  const metaPath = `${path}.meta.json`;
  if (existsSync(path) && existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as Omit<TranscriptInfo, 'path' | 'reused'>;
    if (statSync(path).size === meta.bytes) return { ...meta, path, reused: true };
  }

  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  const target = mb * MB;
  const countsByType: Record<string, number> = {};
  let bytes = 0;
  let events = 0;
  let buffer: string[] = [];
  let buffered = 0;
  const flush = (): void => {
    // ensure_ascii: every line is ASCII, so latin1 writes it byte for byte.
    writeSync(fd, Buffer.from(buffer.join(''), 'latin1'));
    buffer = [];
    buffered = 0;
  };
  const emit = (event: Event): void => {
    const line = `${pyDumps(event)}\n`;
    buffer.push(line);
    buffered += line.length;
    bytes += line.length;
    events++;
    countsByType[event.type] = (countsByType[event.type] ?? 0) + 1;
    if (buffered >= 1 << 20) flush();
  };
  try {
    const run = new RunModel(new Rng(seed), emit);
    run.start();
    while (bytes < target) run.turn();
    run.end();
    flush();
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const meta = { bytes, events, countsByType };
  writeFileSync(metaPath, `${JSON.stringify(meta, null, 2)}\n`);
  return { ...meta, path, reused: false };
}

// `npx tsx test/bench/generateTranscript.ts [--mb N] [--seed N]`
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { mb: { type: 'string' }, seed: { type: 'string' } } });
  const info = generateTranscript({
    ...(values.mb !== undefined && { mb: Number(values.mb) }),
    ...(values.seed !== undefined && { seed: Number(values.seed) }),
  });
  console.log(JSON.stringify(info, null, 2));
}
