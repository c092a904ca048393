import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DirStore } from '../../src/runs/DirStore.js';
import { runHubOn, type RunHubOptions } from '../../src/runs/LocalRunHub.js';
import { memoryStore } from '../../src/runs/MemoryStore.js';
import type { RunHub } from '../../src/runs/index.js';
import { eventually } from '../support/processes.js';
import { describeHubContract, type HubHarness } from './hubContract.js';
import { HoldingStore } from './holdingStore.js';

/**
 * `runHub` on memory, or on the directory `runs`, through a store that
 * holds its writes when asked: `hold` holds a new run's record, so that it
 * has not started when it is cancelled.
 */
class LocalHarness implements HubHarness {
  readonly afterCrash = 'interrupted';
  private store: HoldingStore;

  private constructor(
    public hub: RunHub,
    store: HoldingStore,
    private readonly options: RunHubOptions,
    private readonly runs: string | undefined,
  ) {
    this.store = store;
  }

  static async open(options: RunHubOptions, runs?: string): Promise<LocalHarness> {
    const store = new HoldingStore(runs === undefined ? memoryStore : new DirStore(runs, () => undefined));
    return new LocalHarness(await runHubOn(store, options), store, options, runs);
  }

  hold(): { release(): Promise<void> } {
    this.store.holding = true;
    return { release: () => Promise.resolve(this.store.release()) };
  }

  /** In memory, the one end of a live run a hub can show is its close: runs die with their process. */
  async crash(id: string): Promise<{ hub: RunHub; endedAt?: string }> {
    if (this.runs === undefined) {
      await this.hub.close();
      return { hub: this.hub };
    }
    return this.reopened(this.runs, id);
  }

  /**
   * The hub's process dies once the run's events so far are in their file:
   * it writes nothing more (its close stands for the lifeline that stops the
   * CLI), and a hub opens on the directory it left. The run ended, as far as
   * the directory tells, when its files were last written.
   */
  private async reopened(runs: string, id: string): Promise<{ hub: RunHub; endedAt: string }> {
    const { events } = await this.hub.status(id);
    const lines = () => {
      try {
        return readFileSync(join(runs, `${id}.jsonl`), 'utf8').split('\n').length - 1;
      } catch {
        return 0; // its file not opened yet
      }
    };
    await eventually(() => lines() >= events);
    this.store.dead = true;
    await this.hub.close();
    const lastWritten = Math.max(...[`${id}.jsonl`, `${id}.json`].map((name) => statSync(join(runs, name)).mtimeMs));
    // Past it: a hub that took the time it opened for the run's end would say another.
    await eventually(() => Date.now() > lastWritten + 5);
    this.store = new HoldingStore(new DirStore(runs, () => undefined));
    this.hub = await runHubOn(this.store, this.options);
    return { hub: this.hub, endedAt: new Date(lastWritten).toISOString() };
  }

  async close(): Promise<void> {
    this.store.release();
    await this.hub.close();
  }
}

describeHubContract('runHub in memory', (_dir, runOptions) => LocalHarness.open({ runOptions, maxLive: 8 }));

describeHubContract('runHub in a directory', (dir, runOptions) =>
  LocalHarness.open({ runOptions, maxLive: 8 }, join(dir, 'runs')),
);
