/** How much of a bad line a `DecodeIssue` keeps, so a huge bad line cannot pin memory. */
const RAW_LIMIT = 300;

/**
 * A line of the stream that did not decode to an event: not JSON, not an
 * object, no string `type`, a known type with the wrong shape, or longer than
 * `maxLineBytes`. Reported through `onDiagnostic`; decoding goes on.
 */
export class DecodeIssue {
  /** The start of the line, cut to a few hundred characters. */
  readonly raw: string;

  constructor(
    /** 1-based line number in the stream, counting blank lines. */
    readonly line: number,
    raw: string,
    /** What is wrong, with the io-ts path of each failing field for a wrong shape. */
    readonly message: string,
  ) {
    this.raw = raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw;
  }

  toString(): string {
    return `line ${this.line}: ${this.message}`;
  }
}
