// vitest's setupFiles: runs in each test process before each test file. The
// suite's broker (suiteBroker.ts) reaches test files through `inject`, but the
// processes they spawn (fleet workers, README blocks, examples, benchmarks)
// only through their environment: `EVOSCI_RX_NATS` for the tests' own code,
// `NATS_URL` for the README and the examples, as users set it.
import { inject } from 'vitest';

process.env['EVOSCI_RX_NATS'] = inject('natsUrl');
process.env['NATS_URL'] = inject('natsUrl');
