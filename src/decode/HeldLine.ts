const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

/** Size of the blocks small pieces are gathered in. */
const BLOCK = 64 * 1024;

/**
 * The bytes of the line still open at the end of a chunk. Pieces of a block's
 * size or more are kept as they came (copied: a source may reuse its buffer);
 * smaller ones are gathered into blocks, so that a line that arrives a byte at
 * a time costs its size, not an object per chunk. Text pieces are held as
 * their UTF-8 (a high surrogate at the end of a piece waits for its pair), so
 * the whole line is decoded once.
 */
export class HeldLine {
  private blocks: Uint8Array[] = [];
  private block = new Uint8Array(0);
  private used = 0;
  private size = 0;
  private readonly utf8 = new TextEncoder();
  /** A high surrogate that ended the last text piece. */
  private carry = '';

  /** Bytes held, the carried surrogate counted as the 3 it would take alone. */
  get length(): number {
    return this.size + (this.carry ? 3 : 0);
  }

  bytes(piece: Uint8Array): void {
    this.flushCarry();
    if (piece.length >= BLOCK) {
      this.seal();
      this.blocks.push(Uint8Array.prototype.slice.call(piece));
    } else {
      if (this.used + piece.length > this.block.length) this.fresh(piece.length);
      this.block.set(piece, this.used);
      this.used += piece.length;
    }
    this.size += piece.length;
  }

  text(piece: string): void {
    let text = this.carry + piece;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (text.length * 3 >= BLOCK) {
      const encoded = this.utf8.encode(text);
      this.seal();
      this.blocks.push(encoded);
      this.size += encoded.length;
      return;
    }
    if (this.used + text.length * 3 > this.block.length) this.fresh(text.length * 3);
    const { written } = this.utf8.encodeInto(text, this.block.subarray(this.used));
    this.used += written;
    this.size += written;
  }

  /** The held line as text, up to `limit` bytes of it. */
  decode(decoder: { decode(bytes: Uint8Array): string }, limit = Infinity): string {
    this.flushCarry();
    this.seal();
    const take = Math.min(this.size, limit);
    if (this.blocks.length === 1) return decoder.decode(this.blocks[0]!.subarray(0, take));
    const joined = new Uint8Array(take);
    let at = 0;
    for (const block of this.blocks) {
      if (at >= take) break;
      const part = block.subarray(0, take - at);
      joined.set(part, at);
      at += part.length;
    }
    return decoder.decode(joined);
  }

  clear(): void {
    this.blocks = [];
    this.block = new Uint8Array(0);
    this.used = 0;
    this.size = 0;
    this.carry = '';
  }

  private flushCarry(): void {
    if (!this.carry) return;
    const carried = this.carry;
    this.carry = '';
    this.text(carried);
  }

  /** Closes the block being filled, keeping only its used bytes. */
  private seal(): void {
    if (this.used === 0) return;
    this.blocks.push(this.block.subarray(0, this.used));
    this.block = new Uint8Array(0);
    this.used = 0;
  }

  private fresh(atLeast: number): void {
    this.seal();
    this.block = new Uint8Array(Math.max(BLOCK, atLeast));
  }
}
