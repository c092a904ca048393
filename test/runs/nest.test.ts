// A real NestJS 11 app (Express platform, on a loopback port) whose @Sse()
// route is the guide's: `afterOf(lastEventId)` and `await hub.status(id)`,
// 204 when `hasSeenEnd`, else `hub.follow(id, { after })` through
// `toMessageEvents({ after, status })`, read with fetch, as an EventSource
// reconnects, and with followRun: the exact bytes Nest writes. The hub is a stub whose runs
// are subjects the test drives, so each step waits for a sign, never a clock.
import 'reflect-metadata';
import {
  Controller,
  Headers as HeaderParam,
  Inject,
  Module,
  Param,
  Res,
  Sse,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  defer,
  EMPTY,
  filter,
  finalize,
  firstValueFrom,
  lastValueFrom,
  ReplaySubject,
  Subject,
  throwError,
  type Observable,
} from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { EvoSciError, ExitError } from '../../src/events/errors.js';
import {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  IdempotencyKeyReusedError,
  RunHubError,
  RunRequestError,
  RunRestartedError,
  UnknownRunError,
} from '../../src/runs/errors.js';
import { followRun } from '../../src/runs/followRun.js';
import { afterOf, hasSeenEnd } from '../../src/runs/lastEventId.js';
import type { FollowOptions, RunHub } from '../../src/runs/RunHub.js';
import { toMessageEvents, type MessageEvent } from '../../src/runs/toMessageEvents.js';
import type { IndexedEvent, RunState, RunStatus } from '../../src/runs/wire.js';
import { events as ev } from '../../testing/events.js';

/**
 * A hub with only `follow` and `status`: each run a subject the test drives, replayed to each follower after
 * `after`; an id it has no run of is unknown, unless the test made it refuse otherwise. A run's status says how
 * many events it has and whether it ended: completed, or failed with an `EvoSciError` (any other error is its
 * followers', not the run's end).
 */
class ScriptedHub implements Pick<RunHub, 'follow' | 'status'> {
  readonly follows: { id: string; after: number | undefined }[] = [];
  /** Signs: a follower of this id was unsubscribed from its run, or its run ended. */
  readonly left = new Subject<string>();
  private readonly runs = new Map<string, ReplaySubject<IndexedEvent>>();
  private readonly states = new Map<string, { state: RunState; events: number }>();
  private readonly refusals = new Map<string, Error>();

  /** From now on, the status of `id` is refused with `error`. */
  refuse(id: string, error: Error): void {
    this.refusals.set(id, error);
  }

  /** A new run, to drive: its events get indexes from 0. */
  script(id: string) {
    const run = new ReplaySubject<IndexedEvent>();
    this.runs.set(id, run);
    const status = { state: 'running' as RunState, events: 0 };
    this.states.set(id, status);
    return {
      push: (...events: EvoEvent[]) => events.forEach((event) => run.next({ index: status.events++, event })),
      complete: () => {
        status.state = 'completed';
        run.complete();
      },
      fail: (error: Error) => {
        if (EvoSciError.is(error)) status.state = 'failed';
        run.error(error);
      },
      /** Whether a follower is subscribed. */
      followed: () => run.observed,
    };
  }

  status(id: string): Promise<RunStatus> {
    const refusal = this.refusals.get(id) ?? (this.runs.has(id) ? undefined : new UnknownRunError(id));
    if (refusal) return Promise.reject(refusal);
    return Promise.resolve({ id, prompt: 'scripted', createdAt: new Date(0).toISOString(), ...this.states.get(id)! });
  }

  follow(id: string, { after }: FollowOptions = {}): Observable<IndexedEvent> {
    return defer(() => {
      this.follows.push({ id, after });
      const run = this.runs.get(id);
      if (!run) return throwError(() => new UnknownRunError(id));
      return run.pipe(
        filter((e) => after === undefined || e.index > after),
        finalize(() => this.left.next(id)),
      );
    });
  }
}

const HUB = Symbol('RunHub');

/**
 * The guide's route (examples/nest/runs.module.ts): the refusals before the stream, while Nest can answer them,
 * and 204 to an EventSource back after `end`.
 */
class RunsController {
  constructor(private readonly hub: Pick<RunHub, 'follow' | 'status'>) {}

  async events(
    id: string,
    lastEventId: string | undefined,
    response: { status(code: number): { end(): unknown } },
  ): Promise<Observable<MessageEvent>> {
    const after = afterOf(lastEventId);
    const status = await this.hub.status(id);
    if (hasSeenEnd(status, after)) {
      response.status(204).end();
      return EMPTY;
    }
    return this.hub.follow(id, { after }).pipe(toMessageEvents({ after, status }));
  }
}
// Decorators as calls: the project's tsconfig has no experimentalDecorators.
Controller('runs')(RunsController);
Inject(HUB)(RunsController, undefined, 0);
Param('id')(RunsController.prototype, 'events', 0);
HeaderParam('last-event-id')(RunsController.prototype, 'events', 1);
Res({ passthrough: true })(RunsController.prototype, 'events', 2);
Sse(':id/events')(
  RunsController.prototype,
  'events',
  Object.getOwnPropertyDescriptor(RunsController.prototype, 'events')!,
);

const hub = new ScriptedHub();
class AppModule {}
Module({ controllers: [RunsController], providers: [{ provide: HUB, useValue: hub }] })(AppModule);

let app: INestApplication;
let base: string;

beforeAll(async () => {
  app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false, forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  base = `http://127.0.0.1:${port}/runs`;
});

afterAll(async () => {
  await app?.close();
});

/** An SSE response read frame by frame; `frame()` is `undefined` once the body ended. */
async function openEvents(id: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const response = await fetch(`${base}/${id}/events`, { headers, signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let body = '';
  let ended = false;
  return {
    response,
    /** Everything read so far, as it came. */
    body: () => body,
    async frame(): Promise<string | undefined> {
      for (;;) {
        // Nest starts the body with an empty line, which dispatches nothing.
        buffer = buffer.replace(/^\n+/, '');
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const frame = buffer.slice(0, end + 2);
          buffer = buffer.slice(end + 2);
          return frame;
        }
        if (ended) return undefined;
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
        } else {
          buffer += value;
          body += value;
        }
      }
    },
    /** The rest of the frames, until the body ends. */
    async rest(): Promise<string[]> {
      const frames: string[] = [];
      for (let frame = await this.frame(); frame !== undefined; frame = await this.frame()) frames.push(frame);
      return frames;
    },
  };
}

/** The frame Nest writes for an event of ours. */
const frame = (index: number, event: EvoEvent) => `id: ${index}\ndata: ${JSON.stringify(event)}\n\n`;
const endFrame = (id: string, end: object) => `event: end\nid: ${id}\ndata: ${JSON.stringify(end)}\n\n`;

/** What an SSE parser makes of frames: the events, with `id` only where one counts. */
function parse(frames: string[]): EventSourceMessage[] {
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => messages.push(message) });
  parser.feed(frames.join(''));
  return messages;
}

/**
 * A client that reconnects as an `EventSource` does: each time a response ends, with the last id it was sent as
 * `Last-Event-ID` (an id with a NUL is ignored), until it is answered anything but a 200: a 204 stops it.
 */
class Reconnecting {
  lastEventId = '';
  readonly messages: EventSourceMessage[] = [];

  constructor(private readonly id: string) {}

  /** One connection, read until its body ends, or dropped once `dropAfter` messages came; its status. */
  async connect(dropAfter = Infinity): Promise<number> {
    const abort = new AbortController();
    const headers: Record<string, string> = this.lastEventId === '' ? {} : { 'Last-Event-ID': this.lastEventId };
    const response = await fetch(`${base}/${this.id}/events`, { headers, signal: abort.signal });
    if (response.status !== 200) {
      await response.arrayBuffer();
      return response.status;
    }
    let received = 0;
    const parser = createParser({
      onEvent: (message) => {
        received++;
        this.messages.push(message);
        if (message.id !== undefined) this.lastEventId = message.id;
      },
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    while (received < dropAfter) {
      const { done, value } = await reader.read();
      if (done) return response.status;
      parser.feed(value);
    }
    abort.abort();
    return response.status;
  }

  /** Connects again and again until a status other than 200, or `max` connections: their statuses. */
  async follow(max = 4): Promise<number[]> {
    const statuses: number[] = [];
    while (statuses.length < max && (statuses.at(-1) ?? 200) === 200) statuses.push(await this.connect());
    return statuses;
  }
}

const E = [
  ev.text('Reading the papers'),
  ev.toolCall('read_file', { path: 'a.md' }, 'c1'),
  ev.text('done'),
  ev.usage(3, 4),
  ev.done('ok'),
];

describe('toMessageEvents() behind a NestJS @Sse() route', () => {
  it('streams a live run: ids are the indexes, and `end` closes the stream', async () => {
    const run = hub.script('live');
    const events = await openEvents('live');
    expect(events.response.status).toBe(200);
    expect(events.response.headers.get('content-type')).toBe('text/event-stream');
    run.push(E[0]!);
    expect(await events.frame()).toBe(frame(0, E[0]!));
    run.push(E[1]!, E[2]!);
    expect(await events.frame()).toBe(frame(1, E[1]!));
    expect(await events.frame()).toBe(frame(2, E[2]!));
    run.complete();
    expect(await events.rest()).toEqual([endFrame('3', { state: 'completed' })]);
    expect(events.body()).toBe(
      `\n${frame(0, E[0]!)}${frame(1, E[1]!)}${frame(2, E[2]!)}${endFrame('3', { state: 'completed' })}`,
    );
  });

  it('resumes after Last-Event-ID: a reconnect with 2 gets the events from index 3 only', async () => {
    const run = hub.script('resume');
    run.push(...E);
    run.complete();
    const first = await openEvents('resume');
    const all = await first.rest();
    expect(all).toEqual([...E.map((e, i) => frame(i, e)), endFrame('5', { state: 'completed' })]);
    const again = await openEvents('resume', { 'Last-Event-ID': '2' });
    const frames = await again.rest();
    expect(frames).toEqual([frame(3, E[3]!), frame(4, E[4]!), endFrame('5', { state: 'completed' })]);
    expect(hub.follows.filter((f) => f.id === 'resume')).toEqual([
      { id: 'resume', after: undefined },
      { id: 'resume', after: 2 },
    ]);
    // The id of `end` is the run's event count: an index no event has.
    expect(parse(frames).map((m) => m.id)).toEqual(['3', '4', '5']);
  });

  it('ends a reconnect that has nothing new with `end` alone, whose id is the event count: its Last-Event-ID + 1', async () => {
    const run = hub.script('caught-up');
    run.push(...E);
    run.complete();
    const frames = await (await openEvents('caught-up', { 'Last-Event-ID': '4' })).rest();
    expect(frames).toEqual([endFrame('5', { state: 'completed' })]);
    expect(parse(frames)).toEqual([{ id: '5', event: 'end', data: '{"state":"completed"}' }]);
  });

  it('stops an EventSource after `end`: its reconnect, with the id of `end`, is answered 204', async () => {
    const run = hub.script('stops');
    run.push(...E);
    run.complete();
    const client = new Reconnecting('stops');
    expect(await client.follow()).toEqual([200, 204]);
    expect(client.messages.map((m) => m.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(client.messages.at(-1)).toEqual({ id: '5', event: 'end', data: '{"state":"completed"}' });
    // Answered before the run is followed again; past the end too.
    expect(hub.follows.filter((f) => f.id === 'stops')).toHaveLength(1);
    const past = await fetch(`${base}/stops/events`, { headers: { 'Last-Event-ID': '9' } });
    expect([past.status, await past.text()]).toEqual([204, '']);
  });

  it('resumes a connection dropped mid-run from its Last-Event-ID, repeating nothing and skipping nothing', async () => {
    const run = hub.script('dropped');
    run.push(E[0]!, E[1]!);
    const client = new Reconnecting('dropped');
    // The connection drops once two events came: the client has 0 and 1.
    expect(await client.connect(2)).toBe(200);
    expect(client.lastEventId).toBe('1');
    run.push(E[2]!);
    const rest = client.follow();
    run.push(E[3]!, E[4]!);
    run.complete();
    expect(await rest).toEqual([200, 204]);
    expect(client.messages.map((m) => m.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(client.messages.slice(0, 5).map((m) => m.data)).toEqual(E.map((e) => JSON.stringify(e)));
    expect(client.messages.at(-1)).toMatchObject({ event: 'end', id: '5' });
    expect(hub.follows.filter((f) => f.id === 'dropped')).toEqual([
      { id: 'dropped', after: undefined },
      { id: 'dropped', after: 1 },
    ]);
  });

  it('ends a failing run with `event: end` and its error, never with an error frame of Nest', async () => {
    const run = hub.script('failing');
    const events = await openEvents('failing');
    run.push(E[0]!);
    expect(await events.frame()).toBe(frame(0, E[0]!));
    run.fail(
      new ExitError('EvoSci exited with code 1', { exitCode: 1, stderrTail: 'Traceback (most recent call last)' }),
    );
    expect(await events.rest()).toEqual([
      'event: end\nid: 1\ndata: {"state":"failed","error":{"name":"ExitError","message":"EvoSci exited with code 1","exitCode":1}}\n\n',
    ]);
    expect(events.body()).not.toContain('event: error');
    expect(events.body()).not.toContain('Traceback');
  });

  it('ends the stream of a run forgotten once it began with one `error` event', async () => {
    hub.script('forgotten').fail(new ForgottenRunError('forgotten'));
    const events = await openEvents('forgotten');
    expect(events.response.status).toBe(200);
    const error = { name: 'ForgottenRunError', message: 'run forgotten ended and is no longer kept' };
    expect(await events.rest()).toEqual([`event: error\nid: \0\ndata: ${JSON.stringify(error)}\n\n`]);
  });

  it('answers a run the hub does not hold with 404, which followRun gives as an UnknownRunError', async () => {
    const response = await fetch(`${base}/nope/events`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'no run "nope"' });
    const error = await lastValueFrom(followRun(`${base}/nope/events`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownRunError);
    expect(error).toMatchObject({ status: 404, id: 'nope' });
  });

  it("answers a closed hub with 503 and the status text: a server error's message is not the client's", async () => {
    hub.refuse('closed', new HubClosedError());
    const response = await fetch(`${base}/closed/events`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ statusCode: 503, message: 'Service Unavailable' });
  });

  it('refuses a Last-Event-ID that is not an index with 400, before following anything', async () => {
    const before = hub.follows.length;
    const response = await fetch(`${base}/resume/events`, { headers: { 'Last-Event-ID': 'abc' } });
    expect(response.status).toBe(400);
    // Nest's own handler answers an error in the shape of http-errors', as RunHubError is: no filter of the app's.
    expect(await response.json()).toEqual({
      statusCode: 400,
      message: 'Last-Event-ID must be the decimal index of an event, got "abc"',
    });
    expect(hub.follows.length).toBe(before);
  });

  it('unsubscribes from the run when the client goes away', async () => {
    const run = hub.script('left');
    const abort = new AbortController();
    const events = await openEvents('left', {}, abort.signal);
    run.push(E[0]!);
    expect(await events.frame()).toBe(frame(0, E[0]!));
    const left = firstValueFrom(hub.left.pipe(filter((id) => id === 'left')));
    abort.abort();
    await expect(left).resolves.toBe('left');
    expect(run.followed()).toBe(false);
  });
});

// NestJS 12's exception handler takes the status of an error that is not its own HttpException only from the
// shape of an `http-errors` error (@nestjs/core 12, BaseExceptionFilter.isHttpError): a boolean `expose`, a numeric
// `statusCode`, `status === statusCode`, an `Error`. Anything less is a 500. The apps of test/package/nest.test.ts
// run it for real.
describe("RunHubError in the shape of an http-errors error, which NestJS 12's handler reads", () => {
  it.each([
    new UnknownRunError('r1'),
    new ForgottenRunError('r1'),
    new RunRequestError('prompt must not be empty'),
    new IdempotencyKeyReusedError('r1'),
    new RunRestartedError('r1', 2),
    new HubFullError(4),
    new HubClosedError(),
    new RunHubError('bad gateway', 502),
  ])('$name ($status)', (error) => {
    expect(error).toBeInstanceOf(Error);
    expect(error.statusCode).toBe(error.status);
    // A client's error (4xx) is told to it; a server's (5xx) is not.
    expect(error.expose).toBe(error.status < 500);
  });
});
