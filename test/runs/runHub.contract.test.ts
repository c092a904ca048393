import { join } from 'node:path';
import { runHub } from '../../src/runs/index.js';
import { describeHubContract } from './hubContract.js';

describeHubContract('runHub in memory', async (_dir, runOptions) => {
  const hub = await runHub({ runOptions, maxLive: 8 });
  return { hub, close: () => hub.close() };
});

describeHubContract('runHub in a directory', async (dir, runOptions) => {
  const hub = await runHub({ runOptions, maxLive: 8, dir: join(dir, 'runs') });
  return { hub, close: () => hub.close() };
});
