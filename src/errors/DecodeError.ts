import type { DecodeIssue } from '../decode/DecodeIssue.js';
import { EvoSciError } from './EvoSciError.js';
import type { EvoSciErrorDetails } from './EvoSciErrorDetails.js';

/** A line did not decode and `strict: true` was set. */
export class DecodeError extends EvoSciError {
  constructor(
    readonly issue: DecodeIssue,
    details: EvoSciErrorDetails = {},
  ) {
    super(`bad line in stream-json output: ${issue.toString()}`, details);
  }
}
