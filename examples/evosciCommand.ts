// Shared by the examples: run the real EvoSci when it is installed, else the
// fake CLI of `evosci-rx/testing` replaying a bundled transcript.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeEvoSci, type FakeStep } from 'evosci-rx/testing';

/** A transcript bundled with the examples. */
export function transcript(name: string): string {
  return fileURLToPath(new URL(`./transcripts/${name}`, import.meta.url));
}

/** Pacing that makes a replay look like a live run; `speed` 2 plays twice as fast. */
export function livePacing(speed = 1): { delayByType: Record<string, number> } {
  const ms = (n: number) => Math.round(n / speed);
  return {
    delayByType: {
      thinking: ms(60),
      text: ms(30),
      tool_call: ms(25),
      tool_result: ms(450),
      subagent_start: ms(200),
      subagent_tool_call: ms(25),
      subagent_tool_result: ms(350),
      subagent_text: ms(30),
      usage_stats: ms(10),
      done: ms(100),
    },
  };
}

function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * `command`/`env` for `run()`: the real CLI (`$EVOSCI_BIN`, or `EvoSci` on the
 * PATH) unless `EVOSCI_RX_FAKE=1`, else the fake replaying `steps`.
 */
export function evosciCommand(steps: FakeStep[]): { command?: string; env?: Record<string, string>; fake: boolean } {
  const real = process.env['EVOSCI_RX_FAKE'] !== '1' && (process.env['EVOSCI_BIN'] !== undefined || onPath('EvoSci'));
  return real ? { fake: false } : { ...fakeEvoSci(steps), fake: true };
}
