// The runs handler mounted as users mount it: Express (after its JSON body
// parser, under a path), Fastify (before its body parsing) and NestJS, each
// with a real hub: a POST starts one process, the SSE stream reads it whole.
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Headers as HeaderParam, Module, Param, Res, Sse } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import Fastify from 'fastify';
import { EMPTY } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { afterOf, hasSeenEnd, runHub, runsHandler, toMessageEvents, type RunHub } from '../../src/runs/index.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';
import { call, readSse } from './sseClient.js';

/** Starts a run through `runs` (the collection's URL) and reads its events; checks one process ran it whole. */
async function startAndRead(runs: string, dir: string, eventsUrl = (id: string) => `${runs}/${id}/events`) {
  const started = await call(runs, 'POST', request('demo'), { 'idempotency-key': 'mount-1' });
  expect(started.status).toBe(201);
  const again = await call(runs, 'POST', request('demo'), { 'idempotency-key': 'mount-1' });
  expect(again).toMatchObject({ status: 200, body: { id: started.body['id'] } });
  const { frames } = await readSse(eventsUrl(started.body['id'] as string));
  expect(frames.map((f) => f.event ?? f.id)).toEqual([
    ...Array.from({ length: DEMO_EVENTS }, (_, i) => String(i)),
    'end',
  ]);
  expect(spawnsIn(dir)).toHaveLength(1);
  return started.body['id'] as string;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

describe('runsHandler mounted in', () => {
  let dir: string;
  let hub: RunHub;
  let stop: () => Promise<void>;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-mounts-'));
    hub = await runHub({ runOptions: scenarioRunOptions(dir) });
  });
  afterEach(async () => {
    await hub.close();
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Express, under a path and after express.json()', async () => {
    const app = express();
    app.use(express.json());
    app.use('/api', runsHandler(hub));
    app.get('/health', (_req, res) => void res.send('ok'));
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    stop = () => new Promise((resolve) => server.close(() => resolve()));
    const base = `http://127.0.0.1:${portOf(server)}`;
    await startAndRead(`${base}/api/runs`, dir);
    // Paths outside the routes go on to the app.
    expect(await fetch(`${base}/health`).then((r) => r.text())).toBe('ok');
  });

  it('Fastify, before its body parsing', async () => {
    const app = Fastify();
    const handler = runsHandler(hub);
    app.addHook('onRequest', (req, reply, done) => {
      if (!/^\/runs(\/|$|\?)/.test(req.url)) return done();
      reply.hijack();
      handler(req.raw, reply.raw);
    });
    app.get('/health', () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    stop = () => app.close();
    const base = `http://127.0.0.1:${portOf(app.server)}`;
    await startAndRead(`${base}/runs`, dir);
    expect(await fetch(`${base}/health`).then((r) => r.text())).toBe('ok');
  });

  it('NestJS: the handler as middleware, and a controller of its own on toMessageEvents()', async () => {
    // The guide's route: the refusals come before the stream, while Nest can still answer with their status.
    class EventsController {
      async events(
        id: string,
        lastEventId: string | undefined,
        response: { status(code: number): { end(): unknown } },
      ) {
        const after = afterOf(lastEventId);
        const status = await hub.status(id);
        if (hasSeenEnd(status, after)) {
          response.status(204).end();
          return EMPTY;
        }
        return hub.follow(id, { after }).pipe(toMessageEvents({ after, status }));
      }
    }
    // The decorators as `@Controller('nest') … @Sse(':id/events')` apply them.
    Controller('nest')(EventsController);
    Param('id')(EventsController.prototype, 'events', 0);
    HeaderParam('last-event-id')(EventsController.prototype, 'events', 1);
    Res({ passthrough: true })(EventsController.prototype, 'events', 2);
    Sse(':id/events')(
      EventsController.prototype,
      'events',
      Object.getOwnPropertyDescriptor(EventsController.prototype, 'events')!,
    );
    class AppModule {}
    Module({ controllers: [EventsController] })(AppModule);
    const app = await NestFactory.create(AppModule, { logger: false });
    app.use(runsHandler(hub));
    await app.listen(0, '127.0.0.1');
    stop = () => app.close();
    const base = `http://127.0.0.1:${portOf(app.getHttpServer() as Server)}`;
    const id = await startAndRead(`${base}/runs`, dir, (runId) => `${base}/nest/${runId}/events`);
    const resumed = await readSse(`${base}/nest/${id}/events`, { lastEventId: String(DEMO_EVENTS - 2) });
    expect(resumed.frames.map((f) => f.event ?? f.id)).toEqual([String(DEMO_EVENTS - 1), 'end']);
    // `end` carries the event count; the reconnect an EventSource makes with it is answered 204.
    expect(resumed.frames.at(-1)!.id).toBe(String(DEMO_EVENTS));
    expect((await readSse(`${base}/nest/${id}/events`, { lastEventId: String(DEMO_EVENTS) })).status).toBe(204);
    expect((await readSse(`${base}/nest/nope/events`, { lastEventId: 'x' })).status).toBe(400);
    expect((await readSse(`${base}/nest/nope/events`)).status).toBe(404);
    expect(spawnsIn(dir)).toHaveLength(1);
  });
});
