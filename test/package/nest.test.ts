// examples/nest, the NestJS module of docs/http-hosts.md, as users build it on the packed package: installed by npm
// beside NestJS 12 and beside NestJS 11, compiled by tsc with NestJS's decorator settings, as ES modules and as
// CommonJS, run on a loopback port with the fake CLI as its EvoSci, and asked over HTTP. Each run of the fake waits
// at a gate file after its first event, so a run is live for as long as a test needs, and its first event is the
// sign.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { count, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJsonlFile } from '../../src/files/fromJsonlFile.js';
import { UnknownRunError } from '../../src/runs/errors.js';
import { followRun } from '../../src/runs/followRun.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { recordedRuns } from '../../testing/recordedRuns.js';
import { gone, isAlive } from '../support/processes.js';
import { BUILD_TIMEOUT_MS, buildProjects, exec, packTarball, root } from './packed.js';

type Form = 'esm' | 'commonjs';

/** The thread id a run of the fake prints when it is stopped with SIGINT. */
const THREAD = '5d0c1a2e';

/** Each major in the form its users start from (12 is ES modules; 11's `nest new` is CommonJS), and the other one. */
const apps = [
  { nest: 12, form: 'esm' },
  { nest: 12, form: 'commonjs' },
  { nest: 11, form: 'commonjs' },
  { nest: 11, form: 'esm' },
] as const satisfies readonly { nest: number; form: Form }[];

const EXAMPLE = ['runs.module.ts', 'main.ts'];

/** An app of one major: its packages, as npm installs them, with the tarball of this checkout. */
async function install(dir: string, nest: number, tarball: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `nest${nest}-runs`, private: true }));
  const packages = ['common', 'core', 'platform-express'].map((name) => `@nestjs/${name}@${nest}`);
  await exec(
    'npm',
    ['install', '--no-audit', '--no-fund', tarball, ...packages, 'reflect-metadata', 'rxjs', '@types/node@20'],
    { cwd: dir },
  );
}

/** The example as a project in `dir` of its major's app, compiled as ES modules or as CommonJS. */
function project(dir: string, form: Form): string {
  mkdirSync(join(dir, 'src'), { recursive: true });
  for (const file of EXAMPLE) copyFileSync(join(root, 'examples/nest', file), join(dir, 'src', file));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: form === 'esm' ? 'module' : 'commonjs' }));
  const modules = form === 'esm' ? { module: 'nodenext', moduleResolution: 'nodenext' } : { module: 'commonjs' };
  // NestJS's own settings: legacy decorators with their metadata.
  const compilerOptions = {
    ...modules,
    target: 'es2022',
    strict: true,
    skipLibCheck: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    types: ['node'],
    rootDir: 'src',
    outDir: 'out',
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
  return dir;
}

/** The app, started; `url` is its `/runs` once it printed it. */
interface App {
  readonly child: ChildProcess;
  readonly url: string;
  /** Where the fake writes each run's `{ pid, argv }`, and the file its runs wait for after their first event. */
  readonly record: string;
  readonly gate: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startApp(dir: string): Promise<App> {
  const record = join(dir, 'runs.jsonl');
  const gate = join(dir, 'gate');
  const fake = fakeEvoSci([
    // As EvoSci: on SIGINT, the resume hint of its thread, which the hub records if it is still there to read it.
    { handleSigint: { resumeHint: THREAD } },
    { record, append: true },
    { transcript: recordedRuns.research, count: 1 },
    { waitForFile: gate },
    { transcript: recordedRuns.research, from: 1 },
    { resumeHint: '4e1f9a2b' },
    { exitAsEvoSci: true },
  ]);
  const runsDir = join(dir, 'runs');
  const env = { ...process.env, ...fake.env, EVOSCI_BIN: fake.command, PORT: '0', RUNS_DIR: runsDir, NO_COLOR: '1' };
  const child = spawn(process.execPath, ['out/main.js'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: string) => {
      output += chunk;
      const printed = /^runs at (\S+)$/m.exec(output);
      if (printed) resolve(printed[1]!);
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    void exited.then(({ code, signal }) => reject(new Error(`the app exited ${code ?? signal}:\n${output}`)));
  });
  return { child, url, record, gate, exited };
}

const post = (url: string, body: unknown, key?: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': `"${key}"` }) },
    body: JSON.stringify(body),
  });

/** Starts a run and waits for its first event: the sign that its process is there, waiting at the gate. */
async function liveRun(app: App, prompt: string): Promise<{ id: string; pid: number }> {
  const started = await post(app.url, { prompt });
  expect(started.status).toBe(201);
  const { id } = (await started.json()) as { id: string };
  const abort = new AbortController();
  const response = await fetch(`${app.url}/${id}/events`, { signal: abort.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!/^id: 0$/m.test(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the events of ${id} ended before the first: ${text}`);
    text += value;
  }
  abort.abort();
  // The fake writes its record before its first event.
  return { id, pid: records(app).find((run) => run.argv.includes(`--prompt=${prompt}`))!.pid };
}

/** What each run of the fake in `app` recorded of itself. */
function records(app: App): { pid: number; argv: string[] }[] {
  if (!existsSync(app.record)) return [];
  return readFileSync(app.record, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { pid: number; argv: string[] });
}

/** Every message of a whole SSE body. */
function messagesOf(body: string): EventSourceMessage[] {
  const messages: EventSourceMessage[] = [];
  createParser({ onEvent: (message) => messages.push(message) }).feed(body);
  return messages;
}

describe('examples/nest, built on the packed package', () => {
  const temp = mkdtempSync(join(tmpdir(), 'evosci-rx-nest-'));
  let tarball = '';
  let built: Promise<Map<string, string>>;

  // Two npm installs of NestJS (each some 10–30 s on a busy machine, beside the other) and one tsc building four
  // projects with NestJS's declarations: only a hang should reach the packed-package tests' build bound.
  beforeAll(async () => {
    tarball = await packTarball();
    await Promise.all([11, 12].map((nest) => install(join(temp, `nest${nest}`), nest, tarball)));
    built = buildProjects(apps.map(({ nest, form }) => project(join(temp, `nest${nest}`, form), form)));
    // Each app's tests await it; a failed build is reported there.
    built.catch(() => {});
  }, BUILD_TIMEOUT_MS);

  afterAll(() => {
    for (const dir of [temp, dirname(tarball)]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is the guide's module and bootstrap (docs/http-hosts.md), word for word", () => {
    const guide = readFileSync(join(root, 'docs/http-hosts.md'), 'utf8');
    for (const file of EXAMPLE) {
      // After the file's own header comment.
      const code = readFileSync(join(root, 'examples/nest', file), 'utf8').replace(/^(\/\/.*\n)+/, '');
      expect(guide).toContain('```typescript\n' + code + '```');
    }
  });

  describe.each(apps)('on NestJS $nest as $form', ({ nest, form }) => {
    const dir = join(temp, `nest${nest}`, form);
    let app: App;

    beforeAll(async () => {
      expect((await built).get(dir)).toBe('');
      const { stdout } = await exec(process.execPath, ['-p', "require('@nestjs/core/package.json').version"], {
        cwd: dir,
      });
      expect(stdout).toMatch(new RegExp(`^${nest}\\.`));
      app = await startApp(dir);
    }, BUILD_TIMEOUT_MS);

    afterAll(async () => {
      // Only if a test failed before the app's end: closed as in production, its hub stops the runs.
      if (app?.child.exitCode === null && app.child.signalCode === null) {
        app.child.kill('SIGTERM');
        await app.exited;
      }
      // And a run of the fake that a failed test left behind all the same.
      for (const { pid } of app ? records(app) : []) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    });

    it('starts a run once per Idempotency-Key: 201, 200 on the key again, 422 with another prompt', async () => {
      const first = await post(app.url, { prompt: 'Survey sparse attention' }, 'survey-1');
      expect(first.status).toBe(201);
      const { id } = (await first.json()) as { id: string };
      const again = await post(app.url, { prompt: 'Survey sparse attention' }, 'survey-1');
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ id });
      const reused = await post(app.url, { prompt: 'Something else' }, 'survey-1');
      expect(reused.status).toBe(422);
      expect(await reused.json()).toEqual({
        statusCode: 422,
        message: `this Idempotency-Key started run ${id} with another request`,
      });
      const list = (await (await fetch(app.url)).json()) as { id: string }[];
      expect(list.filter((run) => run.id === id)).toHaveLength(1);
    });

    it('refuses an empty prompt and a bad Last-Event-ID with 400, an unknown run with 404', async () => {
      const empty = await post(app.url, { prompt: '' });
      expect([empty.status, await empty.json()]).toEqual([
        400,
        { statusCode: 400, message: 'prompt must not be empty' },
      ]);
      const { id } = (await (await post(app.url, { prompt: 'for its events' })).json()) as { id: string };
      const badId = await fetch(`${app.url}/${id}/events`, { headers: { 'last-event-id': 'x' } });
      expect(badId.status).toBe(400);
      expect(await badId.json()).toEqual({
        statusCode: 400,
        message: 'Last-Event-ID must be the decimal index of an event, got "x"',
      });
      for (const path of ['nope', 'nope/events']) {
        const unknown = await fetch(`${app.url}/${path}`);
        expect([unknown.status, await unknown.json()]).toEqual([404, { statusCode: 404, message: 'no run "nope"' }]);
      }
    });

    it('gives followRun of a run it does not hold an UnknownRunError, its real class', async () => {
      const error = await lastValueFrom(followRun(`${app.url}/nope/events`)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnknownRunError);
      expect(error).toMatchObject({ status: 404, id: 'nope' });
    });

    it("streams a run's events over SSE, ids its indexes, then `end`; followRun reads the same", async () => {
      const { id } = await liveRun(app, 'to follow');
      writeFileSync(app.gate, '');
      const body = await (await fetch(`${app.url}/${id}/events`)).text();
      rmSync(app.gate);
      const events = await lastValueFrom(fromJsonlFile(recordedRuns.research).pipe(count()));
      const messages = messagesOf(body);
      // `end` carries the event count, an index no event has.
      expect(messages.map((m) => m.id)).toEqual([...Array(events).keys()].map(String).concat(String(events)));
      expect(messages.at(-1)).toEqual({ event: 'end', id: String(events), data: '{"state":"completed"}' });
      expect(await lastValueFrom(followRun(`${app.url}/${id}/events`).pipe(toArray()))).toHaveLength(events);
      const status = (await (await fetch(`${app.url}/${id}`)).json()) as { state: string; events: number };
      expect(status).toMatchObject({ state: 'completed', events });
    });

    it('answers an EventSource back after `end` with 204, which stops it; one back from its last event gets `end`', async () => {
      const { id } = await liveRun(app, 'to reconnect');
      writeFileSync(app.gate, '');
      const events = await lastValueFrom(followRun(`${app.url}/${id}/events`).pipe(count()));
      rmSync(app.gate);
      // As an EventSource reconnects once the stream closed: with the id of `end`, or past it.
      for (const lastEventId of [String(events), String(events + 3)]) {
        const again = await fetch(`${app.url}/${id}/events`, { headers: { 'last-event-id': lastEventId } });
        expect([again.status, await again.text()]).toEqual([204, '']);
      }
      // Dropped after the last event, before `end`: it is sent `end` alone, with the event count.
      const last = await fetch(`${app.url}/${id}/events`, { headers: { 'last-event-id': String(events - 1) } });
      expect(last.status).toBe(200);
      expect(messagesOf(await last.text())).toEqual([
        { event: 'end', id: String(events), data: '{"state":"completed"}' },
      ]);
    });

    it('cancels a live run on DELETE, and answers once its process is gone', async () => {
      const { id, pid } = await liveRun(app, 'to cancel');
      const cancelled = await fetch(`${app.url}/${id}`, { method: 'DELETE' });
      expect(cancelled.status).toBe(200);
      // Stopped with SIGINT, it printed its resume hint: the follow-up run resumes that thread.
      expect(await cancelled.json()).toMatchObject({ id, state: 'cancelled', threadId: THREAD });
      expect(isAlive(pid)).toBe(false);
    });

    it('closes the hub on SIGTERM: a live run is stopped as EvoSci should be, and its end is kept', async () => {
      const { id, pid } = await liveRun(app, 'at shutdown');
      app.child.kill('SIGTERM');
      // Nest raises the signal again once the app is closed.
      expect(await app.exited).toEqual({ code: null, signal: 'SIGTERM' });
      expect(isAlive(pid)).toBe(false);
      // Without the hub's close, the library would SIGKILL the run as Node exits: no resume hint, no end written.
      app = await startApp(dir);
      const status = (await (await fetch(`${app.url}/${id}`)).json()) as { error?: unknown };
      expect(status).toMatchObject({ state: 'interrupted', threadId: THREAD });
      expect(status.error).toMatchObject({ message: `run ${id} was interrupted: its hub closed` });
    });

    it("stops a run's EvoSci when the app is killed outright, where no shutdown hook runs", async () => {
      const { pid } = await liveRun(app, 'killed');
      app.child.kill('SIGKILL');
      await app.exited;
      // The run's lifeline sees the app's end of its pipe close, and stops the group.
      expect(await gone(pid)).toBe(true);
    });
  });
});
