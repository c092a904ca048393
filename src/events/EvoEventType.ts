import type { EvoEvent } from './EvoEvent.js';

/** The `type` of a known event: `'thinking' | 'text' | … | 'done'`. */
export type EvoEventType = EvoEvent['type'];
