const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;
const encoder = new TextEncoder();

/** Size of the block small pieces are gathered in. */
const BLOCK = 64 * 1024;
/** The most continuation bytes a UTF-8 character has. */
const MAX_CONTINUATION = 3;

/** Whether a byte continues a UTF-8 character (`10xxxxxx`). */
function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/**
 * The length of the longest start of `bytes` that does not end inside a
 * character; the rest (at most 3 bytes) is the start of one still to come.
 * Decoding the two parts apart gives what decoding them together gives:
 * the cut is always just before a byte that is not a continuation.
 */
export function wholeCharacters(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let back = 1; back <= MAX_CONTINUATION && back <= length; back++) {
    const byte = bytes[length - back]!;
    if (!isContinuation(byte)) {
      const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return size > back ? length - back : length;
    }
  }
  return length;
}

const LOW_SURROGATE_FIRST = 0xdc00;
const LOW_SURROGATE_LAST = 0xdfff;
/** A surrogate without its other half, which UTF-8 cannot hold: encoders write U+FFFD for it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const REPLACEMENT = '\ufffd';

/** UTF-8 bytes of the code unit at `i` of `text`: 4 for a pair (both units), 3 for a lone surrogate, as encoders write it. */
function utf8Size(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= HIGH_SURROGATE_FIRST && c <= HIGH_SURROGATE_LAST) {
    const next = text.charCodeAt(i + 1);
    if (next >= LOW_SURROGATE_FIRST && next <= LOW_SURROGATE_LAST) return 4;
  }
  return 3;
}

/** UTF-8 length of a string, as `TextEncoder` would write it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const size = utf8Size(text, i);
    bytes += size;
    if (size === 4) i++;
  }
  return bytes;
}

/** The longest start of `text` whose UTF-8 is at most `bytes` long, a pair kept whole. */
function utf8Prefix(text: string, bytes: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const size = utf8Size(text, i);
    if (used + size > bytes) break;
    used += size;
    i += size === 4 ? 2 : 1;
  }
  return text.slice(0, i);
}

/**
 * The line still open at the end of a chunk, read as it comes: the whole
 * characters of a piece are decoded at once into text, and only small pieces,
 * and the few bytes of a character split between chunks, wait as bytes in
 * one reused block. So a long line costs one decoding of its bytes and one
 * join, and a line that arrives a byte at a time costs its size, not an
 * object per chunk. `length` counts the line's UTF-8 bytes, for the limit.
 */
export class HeldLine {
  /** The line's text so far, decoded; `block` holds the bytes that follow. */
  private parts: string[] = [];
  private block: Uint8Array<ArrayBuffer> | undefined;
  private used = 0;
  private size = 0;
  /** A high surrogate that ended the last text piece, held so that a pair split between pieces counts 4 bytes. */
  private carry = '';

  /** `blockSize`: the most bytes gathered before they are decoded. */
  constructor(
    private readonly utf8: { decode(bytes: Uint8Array): string },
    private readonly blockSize = BLOCK,
  ) {}

  /** Bytes held, the carried surrogate counted as the 3 it would take alone. */
  get length(): number {
    return this.size + (this.carry ? 3 : 0);
  }

  /** Adds bytes; the source may reuse its buffer, so none is kept. */
  bytes(piece: Uint8Array): void {
    this.flushCarry();
    this.size += piece.length;
    // Room for a full block, or a character's start left from the last piece, and the bytes that finish it.
    this.block ??= new Uint8Array(Math.max(this.blockSize, MAX_CONTINUATION) + MAX_CONTINUATION);
    if (this.used + piece.length <= this.blockSize) {
      this.block.set(piece, this.used);
      this.used += piece.length;
      return;
    }
    // The character the gathered bytes may end inside is finished by the continuation bytes the piece starts with.
    let from = 0;
    while (from < MAX_CONTINUATION && from < piece.length && isContinuation(piece[from]!)) from++;
    this.block.set(piece.subarray(0, from), this.used);
    const gathered = this.used + from;
    // Unless the piece ended first: then what the gathered bytes end inside stays, to be finished later.
    const decoded = from < piece.length ? gathered : wholeCharacters(this.block.subarray(0, gathered));
    this.add(this.utf8.decode(this.block.subarray(0, decoded)));
    this.block.copyWithin(0, decoded, gathered);
    this.used = gathered - decoded;
    if (from === piece.length) return;
    const cut = from + wholeCharacters(piece.subarray(from));
    this.add(this.utf8.decode(piece.subarray(from, cut)));
    this.block.set(piece.subarray(cut), 0);
    this.used = piece.length - cut;
  }

  /** Adds text; a high surrogate at its end waits for the next piece, which may hold its pair. */
  text(piece: string): void {
    let text = this.carry + piece;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.addText(text);
  }

  /** The held line as text, up to `limit` UTF-8 bytes of it; what is held does not change. */
  contents(limit = Infinity): string {
    const gathered = this.used > 0 ? this.utf8.decode(this.block!.subarray(0, this.used)) : '';
    // A carried high surrogate is read as an encoder would write it alone.
    const carried = this.carry === '' ? '' : REPLACEMENT;
    if (limit === Infinity) {
      // One join, into one flat string: a long line is not copied again to be read.
      if (gathered === '' && carried === '' && this.parts.length <= 1) return this.parts[0] ?? '';
      return [...this.parts, gathered, carried].join('');
    }
    let text = '';
    for (const part of this.parts) {
      text += part;
      // A character takes at least one byte: `limit` characters are enough.
      if (text.length >= limit) break;
    }
    return utf8Prefix(text + gathered + carried, limit);
  }

  clear(): void {
    this.parts = [];
    this.used = 0;
    this.size = 0;
    this.carry = '';
  }

  private add(text: string): void {
    if (text !== '') this.parts.push(text);
  }

  /**
   * Text short enough is encoded into the block, as bytes are gathered, so
   * that a line of many small pieces costs its size; longer text is kept as
   * it is, made well formed as encoding it would make it.
   */
  private addText(text: string): void {
    if (text === '') return;
    this.block ??= new Uint8Array(Math.max(this.blockSize, MAX_CONTINUATION) + MAX_CONTINUATION);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (text.length * 3 > this.blockSize - this.used) this.decodeGathered();
    if (text.length * 3 <= this.blockSize - this.used) {
      const { written } = encoder.encodeInto(text, this.block.subarray(this.used, this.blockSize));
      this.used += written;
      this.size += written;
      return;
    }
    const whole = LONE_SURROGATE.test(text) ? this.utf8.decode(encoder.encode(text)) : text;
    this.add(whole);
    this.size += utf8Length(whole);
  }

  /** The gathered bytes as text, after what is held. */
  private decodeGathered(): void {
    if (this.used === 0) return;
    this.add(this.utf8.decode(this.block!.subarray(0, this.used)));
    this.used = 0;
  }

  /** A carried high surrogate whose pair did not come: taken as text alone. */
  private flushCarry(): void {
    if (!this.carry) return;
    const carried = this.carry;
    this.carry = '';
    this.addText(carried);
  }
}
