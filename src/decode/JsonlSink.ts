import type { DecodeIssue } from './DecodeIssue.js';
import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';

/** Where a `JsonlDecoder` sends what it finds. */
export interface JsonlSink {
  event(event: EvoEvent | UnknownEvent): void;
  issue(issue: DecodeIssue): void;
}
