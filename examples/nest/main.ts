// Starts the app of runs.module.ts on 127.0.0.1:$PORT (default 3000), for
// NestJS 12 as ES modules and NestJS 11 as CommonJS alike (no top-level await).
// Runs start EvoSci, or the CLI $EVOSCI_BIN names; $RUNS_DIR keeps them on disk. In this repository:
//
//   npm run build && npx tsx --tsconfig examples/nest/tsconfig.json examples/nest/main.ts
//
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { RunsModule } from './runs.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(RunsModule);
  // SIGTERM and SIGINT close the app, and so the hub: live runs are stopped as EvoSci expects, their ends kept.
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`runs at ${await app.getUrl()}/runs`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
