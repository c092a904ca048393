const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

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

/** UTF-8 length of a string; a high surrogate is taken as the start of a pair. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= HIGH_SURROGATE_FIRST && c <= HIGH_SURROGATE_LAST && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest start of `text` whose UTF-8 is at most `bytes` long, a pair kept whole. */
function utf8Prefix(text: string, bytes: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= HIGH_SURROGATE_FIRST && c <= HIGH_SURROGATE_LAST && i + 1 < text.length;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > bytes) break;
    used += size;
    i += pair ? 2 : 1;
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

  text(piece: string): void {
    let text = this.carry + piece;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.decodeGathered();
    this.add(text);
    this.size += utf8Length(text);
  }

  /** The held line as text, up to `limit` UTF-8 bytes of it; what is held does not change. */
  contents(limit = Infinity): string {
    const gathered = this.used > 0 ? this.utf8.decode(this.block!.subarray(0, this.used)) : '';
    if (limit === Infinity) {
      // One join, into one flat string: a long line is not copied again to be read.
      if (gathered === '' && this.carry === '' && this.parts.length <= 1) return this.parts[0] ?? '';
      return [...this.parts, gathered, this.carry].join('');
    }
    let text = '';
    for (const part of this.parts) {
      text += part;
      // A character takes at least one byte: `limit` characters are enough.
      if (text.length >= limit) break;
    }
    return utf8Prefix(text + gathered + this.carry, limit);
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

  /** The gathered bytes as text, after what is held. */
  private decodeGathered(): void {
    if (this.used === 0) return;
    this.add(this.utf8.decode(this.block!.subarray(0, this.used)));
    this.used = 0;
  }

  private flushCarry(): void {
    if (!this.carry) return;
    this.add(this.carry);
    this.carry = '';
  }
}
