/** Deltas joined a batch at a time: one rope node per delta would keep hundreds of thousands of small strings alive. */
const TEXT_BATCH = 512;

/**
 * The main agent's text deltas, kept to be joined once at the end: joined a
 * batch at a time as they come, and given back as `done.response` itself
 * when that is what they make.
 */
export class TextRope {
  private readonly parts: string[] = [];
  private deltas: string[] = [];
  /** The length of the text the parts and deltas hold. */
  private length = 0;

  push(delta: string): void {
    this.length += delta.length;
    if (this.deltas.push(delta) === TEXT_BATCH) {
      this.parts.push(this.deltas.join(''));
      this.deltas = [];
    }
  }

  /**
   * The deltas joined. A run's `done.response` is every main-agent delta
   * joined, so when it is, this gives that string again rather than a copy
   * of it: no second string of the whole narration to build and keep.
   */
  joined(response: string | undefined): string {
    if (response !== undefined && response.length === this.length && this.is(response)) return response;
    return this.parts.join('') + this.deltas.join('');
  }

  /** Whether the parts and deltas, in order, are `whole` (of the same length), compared in place. */
  private is(whole: string): boolean {
    let at = 0;
    for (const pieces of [this.parts, this.deltas]) {
      for (const piece of pieces) {
        if (!whole.startsWith(piece, at)) return false;
        at += piece.length;
      }
    }
    return true;
  }
}
