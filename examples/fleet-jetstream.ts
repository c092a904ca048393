// EvoSci runs across processes (or hosts) through NATS JetStream: a submitter
// queues runs, two workers take them, a viewer follows each from anywhere.
// Each role is its own process; with no role this starts them all and shows
// their output, each line tagged with who wrote it.
//
//   npx tsx examples/fleet-jetstream.ts [--tasks 6] [--speed 4]        # everything, on this machine
//   npx tsx examples/fleet-jetstream.ts worker --name w1               # on each worker host
//   npx tsx examples/fleet-jetstream.ts submit --tasks 6               # anywhere
//   npx tsx examples/fleet-jetstream.ts view [--expect 6]              # anywhere, any time
//
// `--server` (default $NATS_URL, else 127.0.0.1:4222) is the NATS server, run with `-js`;
// `--prefix` names the streams and subjects (default `evosci`; the all-in-one
// mode uses a fresh one and deletes it at the end). Without EvoSci installed
// (or with EVOSCI_RX_FAKE=1) every run replays
// examples/transcripts/demo-run.jsonl through the fake CLI, `--speed` times
// faster than live. Killing a worker (even with kill -9) stops its runs, and
// another worker runs them again; the viewer then follows the new attempt.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { catchError, defer, filter, lastValueFrom, map, mergeMap, of, retry, take, tap, throwError, timer } from 'rxjs';
import { countToolCalls, summarize } from 'evosci-rx/operators';
import {
  AttemptSupersededError,
  ensureStreams,
  fromJetStream,
  serveRuns,
  submitRun,
  watchRuns,
} from 'evosci-rx/jetstream';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    server: { type: 'string', default: process.env['NATS_URL'] ?? '127.0.0.1:4222' },
    prefix: { type: 'string' },
    tasks: { type: 'string', default: '6' },
    speed: { type: 'string', default: '4' },
    name: { type: 'string', default: `worker-${process.pid}` },
    expect: { type: 'string' },
  },
});
const role = positionals[0] ?? 'all';
const prefix = opts.prefix ?? 'evosci';

const PROMPTS = [
  'Survey sparse attention methods and write notes.md',
  'Benchmark FlashAttention against xFormers at 32k tokens',
  'Summarize recent state-space models (Mamba, RWKV)',
  'Reproduce the LoRA rank ablation on GLUE',
  'Compare tokenizers for code models',
  'Find open datasets for protein structure prediction',
];

async function connected(): Promise<NatsConnection> {
  try {
    const nc = await connect({ servers: opts.server, maxReconnectAttempts: -1, name: `fleet-jetstream ${role}` });
    await ensureStreams(nc, { prefix });
    return nc;
  } catch (err) {
    console.error(`cannot use NATS JetStream at ${opts.server}: ${(err as Error).message}`);
    process.exit(2);
  }
}

/** Takes runs, two at a time, until SIGINT or SIGTERM; then its runs go back to the queue. */
async function worker(): Promise<void> {
  const nc = await connected();
  const { fake, ...cli } = evosciCommand([
    { transcript: transcript('demo-run.jsonl'), ...livePacing(Number(opts.speed)) },
  ]);
  const serving = serveRuns(nc, { prefix, concurrency: 2, worker: opts.name, runOptions: { ...cli } }).subscribe({
    next: (a) =>
      console.log(
        `${a.type} ${a.runId ?? ''}${'attempt' in a ? ` attempt ${a.attempt}` : ''}${'outcome' in a ? ` ${a.outcome}` : ''}`,
      ),
    error: (err: unknown) => {
      console.error(`stopped: ${(err as Error).message}`);
      process.exit(1);
    },
  });
  console.log(`ready${fake ? ' (fake EvoSci)' : ''}`);
  await new Promise<void>((resolve) => ['SIGINT', 'SIGTERM'].forEach((s) => process.once(s, () => resolve())));
  serving.unsubscribe();
  await nc.drain();
}

/** Queues the runs and prints their ids. */
async function submit(): Promise<void> {
  const nc = await connected();
  for (let i = 0; i < Number(opts.tasks); i++) {
    const prompt = PROMPTS[i % PROMPTS.length]!;
    console.log(`submitted ${await submitRun(nc, { prompt }, { prefix })} ${prompt}`);
  }
  await nc.drain();
}

/** Follows every run that starts, prints a line when each ends; stops after --expect runs. */
async function view(): Promise<void> {
  const nc = await connected();
  const expected = opts.expect === undefined ? Infinity : Number(opts.expect);
  const followed = new Set<string>();
  await lastValueFrom(
    watchRuns(nc, { prefix, from: 'start' }).pipe(
      filter((record) => record.record === 'started' && !followed.has(record.runId)),
      mergeMap((record) => {
        followed.add(record.runId);
        // A superseded attempt (its worker died) is followed again from the new attempt's start.
        return defer(() => fromJetStream(nc, record.runId, { prefix }).pipe(summarize())).pipe(
          retry({
            delay: (err: unknown) => (err instanceof AttemptSupersededError ? timer(0) : throwError(() => err)),
          }),
          map((summary) => {
            // Counted as the viewer counts: `task` calls are the sub-agents, not tool calls.
            const tools = countToolCalls(summary.invocations).total;
            return `${summary.outcome}: ${tools} tool ${tools === 1 ? 'call' : 'calls'}, ${summary.usage.totalTokens} main-agent tokens`;
          }),
          // A failed run is a line of the view, not the end of it.
          catchError((err: unknown) => of(`failed: ${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`)),
          tap((line) => console.log(`${record.runId} ${line}`)),
        );
      }),
      take(expected),
    ),
    { defaultValue: undefined },
  );
  await nc.drain();
}

/** Starts a viewer, two workers and a submitter as processes of their own; ends when every run has ended. */
async function all(): Promise<void> {
  const demoPrefix = opts.prefix ?? `fleet-demo-${randomUUID().slice(0, 8)}`;
  const self = fileURLToPath(import.meta.url);
  const common = ['--server', opts.server, '--prefix', demoPrefix, '--speed', String(opts.speed)];
  const start = (
    label: string,
    args: string[],
  ): { child: ChildProcess; ready: Promise<void>; exited: Promise<number | null> } => {
    const child = spawn(process.execPath, ['--import', 'tsx', self, ...args, ...common], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let onReady = () => undefined as void;
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    createInterface({ input: child.stdout }).on('line', (line) => {
      console.log(`[${label}] ${line}`);
      if (line.startsWith('ready')) onReady();
    });
    return { child, ready, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  };
  const viewer = start('viewer', ['view', '--expect', opts.tasks]);
  const workers = [start('worker 1', ['worker', '--name', 'w1']), start('worker 2', ['worker', '--name', 'w2'])];
  await Promise.all(workers.map((w) => w.ready));
  const submitter = start('submitter', ['submit', '--tasks', opts.tasks]);
  const codes = [await submitter.exited, await viewer.exited];
  for (const w of workers) w.child.kill('SIGTERM');
  codes.push(...(await Promise.all(workers.map((w) => w.exited))));
  if (!opts.prefix) {
    const nc = await connect({ servers: opts.server });
    const jsm = await jetstreamManager(nc);
    for (const stream of ['EVENTS', 'REQUESTS', 'HUB'])
      await jsm.streams.delete(`${demoPrefix.toUpperCase()}_${stream}`).catch(() => undefined);
    await nc.close();
  }
  process.exitCode = codes.every((c) => c === 0) ? 0 : 1;
}

const roles: Record<string, () => Promise<void>> = { worker, submit, view, all };
const chosen = roles[role];
if (!chosen) {
  console.error(`unknown role ${JSON.stringify(role)}: use worker, submit, view, or none for all of them`);
  process.exit(2);
}
await chosen();
