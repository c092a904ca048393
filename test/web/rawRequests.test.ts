// The dashboard server against request targets no browser sends, over a raw
// socket to a server in a process of its own: each is answered 400, as the
// runs handler answers it, and the server stays up.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../support/processes.js';
import { sendRaw } from '../support/rawHttp.js';

const SCRIPT = fileURLToPath(new URL('./dashboardProcess.ts', import.meta.url));

describe('the dashboard server, sent raw request targets', () => {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  let port: number;

  beforeAll(async () => {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the dashboard process exited with ${String(code)}`)));
      setTimeout(() => reject(new Error('the dashboard process did not start')), PATIENCE_MS).unref();
    });
    port = Number(new URL((JSON.parse(line) as { url: string }).url).port);
  });
  afterAll(() => {
    child.kill('SIGKILL');
  });

  const raw = (target: string) =>
    sendRaw(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);

  it.each(['http://[', 'http://[::1/', 'http://127.0.0.1:99999/', '*', 'http://user@127.0.0.1/'])(
    'answers GET %s with 400 and goes on serving',
    async (target) => {
      const answer = await raw(target);
      expect(answer.status).toBe(400);
      expect(child.exitCode).toBeNull();
      expect(child.signalCode).toBeNull();
      // The page and the API are still served, in origin form and absolute form.
      expect((await raw('/')).status).toBe(200);
      expect((await raw(`http://127.0.0.1:${port}/style.css`)).status).toBe(200);
      expect((await raw('/runs')).status).toBe(200);
    },
  );
});
