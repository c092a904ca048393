// The run hub in a NestJS app, whole: the README's "CommonJS and NestJS"
// module, kept here so that it is compiled and served over HTTP by the tests
// (test/package/nest.test.ts), as ES modules on NestJS 12 and as CommonJS on
// NestJS 11. main.ts starts it.
import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  Inject,
  Module,
  Param,
  Post,
  Res,
  Sse,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { EMPTY, type Observable } from 'rxjs';
import {
  afterOf,
  hasSeenEnd,
  runHub,
  toMessageEvents,
  type MessageEvent,
  type RunHub,
  type RunStatus,
  type StartRequest,
} from 'evosci-rx/runs';

/** The injection token of the app's one run hub. */
export const RUN_HUB = Symbol('RunHub');

@Controller('runs')
export class RunsController {
  // Every injection names its token: no need for emitted decorator metadata.
  constructor(@Inject(RUN_HUB) private readonly hub: RunHub) {}

  /** 201 {id}; 200 {id} when the Idempotency-Key started a run before (422 if with another body). */
  @Post()
  async start(
    @Body() request: StartRequest,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) response: { status(code: number): unknown },
  ): Promise<{ id: string }> {
    // The draft's key is a structured-field string, `"…"`; a bare one is taken too.
    const idempotencyKey = key?.replace(/^"(.*)"$/, '$1');
    const { id, created } = await this.hub.start(request, { idempotencyKey });
    response.status(created ? 201 : 200);
    return { id };
  }

  @Get()
  list(): Promise<readonly RunStatus[]> {
    return this.hub.list();
  }

  @Get(':id')
  status(@Param('id') id: string): Promise<RunStatus> {
    return this.hub.status(id);
  }

  /**
   * The run's events from after Last-Event-ID, then `end`, whose id is the
   * run's event count. The refusals come before the stream, while Nest can
   * still answer with their status: a bad Last-Event-ID is a 400, a run the
   * hub does not hold a 404 (410 once forgotten), which `followRun` turns
   * back into `UnknownRunError` and `ForgottenRunError`; an event stream can
   * only name them. An EventSource reconnects whenever the stream closes,
   * even after `end`: back with the id of `end`, it is answered 204, which
   * stops it.
   */
  @Sse(':id/events')
  async events(
    @Param('id') id: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res({ passthrough: true }) response: { status(code: number): { end(): unknown } },
  ): Promise<Observable<MessageEvent>> {
    const after = afterOf(lastEventId);
    const status = await this.hub.status(id);
    if (hasSeenEnd(status, after)) {
      response.status(204).end();
      return EMPTY;
    }
    return this.hub.follow(id, { after }).pipe(toMessageEvents({ after, status }));
  }

  /** Cancels the run (idempotent): its status once its process is gone. */
  @Delete(':id')
  cancel(@Param('id') id: string): Promise<RunStatus> {
    return this.hub.cancel(id);
  }
}

/**
 * The server decides how a run starts; a request brings its prompt, and the
 * fields the hub lets through. A lifeline stops a run's EvoSci if the app is
 * killed outright (SIGKILL, out of memory), where no shutdown hook runs.
 * With RUNS_DIR set, the runs are kept there: the app started again serves
 * them, and a run it closed says how it ended.
 */
const hubProvider = {
  provide: RUN_HUB,
  useFactory: () =>
    runHub({ runOptions: { killGraceMs: 5000, lifeline: true }, maxLive: 4, dir: process.env.RUNS_DIR }),
};

@Module({ controllers: [RunsController], providers: [hubProvider] })
export class RunsModule implements OnApplicationShutdown {
  constructor(@Inject(RUN_HUB) private readonly hub: RunHub) {}

  /** Stops the live runs (they end `interrupted`) and waits for their processes: none outlives the app. */
  onApplicationShutdown(): Promise<void> {
    return this.hub.close();
  }
}
