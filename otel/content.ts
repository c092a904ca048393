import { cutText } from '../src/common/cutText.js';

/**
 * Whether prompts, arguments and results are recorded on spans: `false` (the
 * default, as the conventions advise), `true` (each value cut to 4096
 * characters), or a limit of your own.
 */
export type CaptureContent =
  | boolean
  | {
      /** Characters kept of each value; anything but a positive integer throws a `TypeError`. */
      readonly maxLength: number;
    };

const DEFAULT_MAX_LENGTH = 4096;

/** What a trace records of the run's content, and how much of it. */
export class ContentPolicy {
  readonly on: boolean;
  private readonly maxLength: number;

  constructor(option: CaptureContent | undefined) {
    this.on = option !== undefined && option !== false;
    this.maxLength = typeof option === 'object' ? option.maxLength : DEFAULT_MAX_LENGTH;
    if (!(Number.isInteger(this.maxLength) && this.maxLength > 0))
      throw new TypeError(`captureContent.maxLength must be a positive integer, got ${String(this.maxLength)}`);
  }

  /** The text, cut to the limit, never inside a surrogate pair, with `…` where it was cut. */
  text(value: string): string {
    return cutText(value, this.maxLength);
  }

  /** A value as JSON text, cut to the limit: span attributes hold no structured values yet. */
  json(value: unknown): string {
    return this.text(JSON.stringify(value) ?? 'null');
  }

  /** A message list in the conventions' shape (`gen_ai.input.messages`), of one text part. */
  message(role: 'user' | 'assistant', text: string): string {
    return JSON.stringify([{ role, parts: [{ type: 'text', content: this.text(text) }] }]);
  }
}
