// The `--mix` flag of the decoding benchmarks: which large transcript they read.
import type { TranscriptMix } from '../fixtures/producer.js';

/** `--mix text|bytes`, checked: the text-heavy transcript of real runs, or the one of file reads and searches. */
export function transcriptMix(flag: string | undefined): TranscriptMix {
  if (flag === undefined || flag === 'text' || flag === 'bytes') return flag ?? 'text';
  throw new Error(`--mix must be text or bytes, got ${flag}`);
}
