import { Fifo } from '../common/Fifo.js';
import { stripControls } from '../common/terminalText.js';

const RESUME_HINT = /EvoSci\s+(?:--resume|--thread-id)[\s=]+(\S+)/;

/**
 * The producer's stderr as lines: each passed on with every terminal
 * sequence and control character removed, the last `tailChars` characters
 * kept for errors, the resume hint's thread id parsed. Memory is bounded by
 * `tailChars` however much is written, even without newlines, and the work
 * per line does not grow with the tail: the lines are a ring.
 */
export class StderrLog {
  private readonly utf8 = new TextDecoder('utf-8');
  private partial = '';
  /** Kept lines, oldest first, and the characters they take joined by newlines. */
  private readonly lines = new Fifo<string>();
  private size = 0;
  threadId: string | undefined;

  constructor(
    private readonly onLine: ((line: string) => void) | undefined,
    private readonly tailChars = 64 * 1024,
  ) {}

  write(chunk: Uint8Array): void {
    this.text(this.utf8.decode(chunk, { stream: true }));
  }

  end(): void {
    this.text(this.utf8.decode());
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }

  /** The last lines, at most `tailChars` characters. */
  get tail(): string {
    const kept = this.lines.toArray();
    if (this.partial) kept.push(stripControls(this.partial));
    const tail = kept.join('\n');
    return tail.length > this.tailChars ? tail.slice(-this.tailChars) : tail;
  }

  private text(text: string): void {
    let start = 0;
    let end = text.indexOf('\n');
    if (end !== -1) {
      this.line(this.partial + text.slice(0, end));
      this.partial = '';
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    while (end !== -1) {
      this.line(text.slice(start, end));
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    if (start < text.length) {
      this.partial += text.slice(start);
      if (this.partial.length > this.tailChars) this.partial = this.partial.slice(-this.tailChars);
    }
  }

  private line(raw: string): void {
    const line = stripControls(raw);
    const hint = RESUME_HINT.exec(line);
    if (hint) this.threadId = hint[1];
    const kept = line.length > this.tailChars ? line.slice(-this.tailChars) : line;
    this.lines.push(kept);
    this.size += kept.length + 1;
    while (this.size > this.tailChars && this.lines.length > 1) this.size -= this.lines.shift()!.length + 1;
    this.onLine?.(line);
  }
}
