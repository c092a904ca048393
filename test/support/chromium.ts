import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium: `apt-get install -y chromium` (`.ci/run` installs it). Browser downloads are not reachable here. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Flags that keep Chromium off the network it would otherwise try at every start (refused on these machines). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  readonly context: BrowserContext;
  /** Closes the browser (its processes end) and removes its profile. */
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile of its own. */
export async function launchChromium(extraFlags: readonly string[] = []): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'evosci-rx-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [...FLAGS, ...extraFlags],
      viewport: { width: 1400, height: 1000 },
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
