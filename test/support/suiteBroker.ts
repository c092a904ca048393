// vitest's globalSetup (vitest.config.ts, vitest.bench.config.ts): one broker
// for the whole run. The suite then needs only the nats-server binary, not a
// server someone started, and two suites at once share nothing: each starts
// its own, on a free port. `EVOSCI_RX_NATS=host:port` names one to use instead.
import type { TestProject } from 'vitest/node';
import { jetStreamAnswers, missingNatsServer, natsServerBinary, ownBroker } from './natsServer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the broker the JetStream tests share; suiteBrokerEnv.ts hands it on. */
    natsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Checked even when EVOSCI_RX_NATS names a broker: the tests that restart a
  // broker, or need one with users, start their own.
  if (natsServerBinary() === undefined) stop(missingNatsServer());
  const named = process.env['EVOSCI_RX_NATS'];
  if (named) {
    await jetStreamAnswers(named, { withinMs: 3000 }).catch((err: Error) =>
      stop(`EVOSCI_RX_NATS=${named}: no nats-server with JetStream answers there (${err.message})`),
    );
    project.provide('natsUrl', named);
    return undefined;
  }
  const broker = await ownBroker();
  // vitest exits on SIGINT and SIGTERM without its teardown: the server must not outlive it.
  const onExit = () => broker.disposeNow();
  process.once('exit', onExit);
  await broker.start();
  project.provide('natsUrl', broker.url);
  return async () => {
    process.off('exit', onExit);
    await broker.dispose();
  };
}

/**
 * Ends the run before any test file starts, in one line: every JetStream test
 * would otherwise fail on its own, and the cause drown in their failures.
 */
function stop(message: string): never {
  process.stderr.write(`evosci-rx tests: ${message}\n`);
  process.exit(1);
}
