// `evosci-rx fake`: the environment that points an app's `run()` calls at the
// fake CLI, for a server or a page to be tried without EvoSci.
import { resolve } from 'node:path';
import { fakeRun } from '../testing/fakeRun.js';
import { recordedRuns } from '../testing/recordedRuns.js';
import type { FakeCommand } from './args.js';
import { checkReadable } from './files.js';

/** The recorded runs by the names the command takes. */
const RECORDED: Readonly<Record<string, string>> = {
  research: recordedRuns.research,
  'needs-input': recordedRuns.needsInput,
  'needs-approval': recordedRuns.needsApproval,
  resumed: recordedRuns.resumed,
  failed: recordedRuns.failed,
};

/** A value as one POSIX shell word. */
function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `export` lines for `eval` in a POSIX shell: `EVOSCI_BIN` names the fake, `EVOSCI_FAKE` its script. */
export function fakeEnvironment(command: FakeCommand): string {
  const named = Object.hasOwn(RECORDED, command.transcript) ? RECORDED[command.transcript] : undefined;
  const transcript = named ?? resolve(command.transcript);
  if (named === undefined) checkReadable(transcript);
  const fake = fakeRun(transcript, { delayMs: command.delayMs });
  const lines = [`export EVOSCI_BIN=${shellWord(fake.command)}`];
  for (const [name, value] of Object.entries(fake.env)) lines.push(`export ${name}=${shellWord(value)}`);
  return `${lines.join('\n')}\n`;
}
