import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { concat, lastValueFrom, of, tap, throwError, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, fromJsonlFile, run, toJsonl, toJsonlStream, toSseStream, type EvoEvent } from '../../index.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { fixturePath } from '../support/collect.js';

const research = fixturePath('research-run.jsonl');

async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** The SSE messages of a body: each frame's fields. */
function framesOf(body: string): Record<string, string>[] {
  return body
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) =>
      Object.fromEntries(
        frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      ),
    );
}

describe('toJsonlStream', () => {
  it('writes each event as a JSONL line that fromJsonl reads back', async () => {
    const all = await lastValueFrom(fromJsonlFile(research).pipe(toArray()));
    const body = await textOf(toJsonlStream(() => fromJsonlFile(research)));
    expect(body).toBe(all.map(toJsonl).join(''));
    expect(await lastValueFrom(fromJsonl(body).pipe(toArray()))).toEqual(all);
  });

  it('errors the stream with the error of its source, after what came before', async () => {
    const reader = toJsonlStream(
      concat(
        of(ev.text('a')),
        throwError(() => new Error('broken')),
      ),
    ).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(toJsonl(ev.text('a')));
    await expect(reader.read()).rejects.toThrow('broken');
  });
});

describe('toSseStream', () => {
  it('sends each event with its index as id, and ends with an end event', async () => {
    const frames = framesOf(await textOf(toSseStream(of(ev.text('a'), ev.done('d')))));
    expect(frames).toEqual([
      { id: '0', data: JSON.stringify(ev.text('a')) },
      { id: '1', data: JSON.stringify(ev.done('d')) },
      { event: 'end', data: '{}' },
    ]);
  });

  it('resumes after Last-Event-ID over a transcript: each event exactly once', async () => {
    const all = await lastValueFrom(fromJsonlFile(research).pipe(toArray()));
    const cut = Math.floor(all.length / 3);
    const first = framesOf(await textOf(toSseStream(() => fromJsonlFile(research)))).slice(0, cut + 1);
    const rest = framesOf(await textOf(toSseStream(() => fromJsonlFile(research), { lastEventId: String(cut) })));
    const received = [...first, ...rest].filter((f) => f['id'] !== undefined);
    expect(received.map((f) => Number(f['id']))).toEqual(all.map((_, i) => i));
    expect(received.map((f) => JSON.parse(f['data']!) as EvoEvent)).toEqual(all);
  });

  it('refuses a Last-Event-ID that is not an index', () => {
    for (const bad of ['-1', '1e3', 'abc', '0x10', '99999999999999999999', ' 1'])
      expect(() => toSseStream(of(), { lastEventId: bad })).toThrow(/Last-Event-ID must be the decimal index/);
  });

  it('tells the client of an error with its name and first line, never its stack', async () => {
    const err = new TypeError('bad thing\nat secret/path.ts:1');
    const frames = framesOf(
      await textOf(
        toSseStream(
          concat(
            of(ev.text('a')),
            throwError(() => err),
          ),
        ),
      ),
    );
    expect(frames.at(-1)).toEqual({
      event: 'error',
      data: JSON.stringify({ name: 'TypeError', message: 'bad thing' }),
    });
  });

  it('a client that stops reading pauses the CLI; it resumes, and every event arrives once, in order', async () => {
    const lines = 200;
    const { command, env } = fakeEvoSci([
      { bigLine: 256 * 1024, count: lines },
      { lines: [JSON.stringify({ type: 'done', content: '', response: '' })] },
    ]);
    const pauses: number[] = [];
    let produced = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      Readable.fromWeb(
        toSseStream((flow) => {
          flow.watch((paused) => paused && pauses.push(produced));
          return run({ prompt: 'p', command, env, flow }).pipe(tap(() => produced++));
        }) as WebReadableStream,
      ).pipe(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port }, (res) => {
          res.pause();
          const chunks: Buffer[] = [];
          // Reads only once the server has had to pause the run.
          const waitForPause = setInterval(() => {
            if (pauses.length === 0) return;
            clearInterval(waitForPause);
            res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks).toString()));
            res.resume();
          }, 20);
        })
          .on('error', reject)
          .end();
      });
      expect(pauses[0]).toBeLessThan(lines);
      const ids = framesOf(body)
        .filter((f) => f['id'] !== undefined)
        .map((f) => Number(f['id']));
      expect(ids).toEqual(Array.from({ length: lines + 1 }, (_, i) => i));
    } finally {
      server.close();
    }
  });
});
