// Imported first by the quick start, for its side effect: without EvoSci
// installed, `run()` starts the fake CLI replaying a bundled research run,
// and one line on stderr says so. With EvoSci (or `$EVOSCI_BIN`) it does nothing.
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';

const cli = evosciCommand([{ transcript: transcript('demo-run.jsonl'), ...livePacing(4) }]);
if (cli.fake) {
  // `run()` reads EVOSCI_BIN when it is called, and the child inherits the environment.
  Object.assign(process.env, cli.env, { EVOSCI_BIN: cli.command });
  process.stderr.write(
    'EvoSci is not installed: replaying a recorded run through the fake CLI (set EVOSCI_BIN to use yours).\n',
  );
}
