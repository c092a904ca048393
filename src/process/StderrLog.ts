import { stripVTControlCharacters } from 'node:util';

const RESUME_HINT = /EvoSci\s+(?:--resume|--thread-id)[\s=]+(\S+)/;

/**
 * The producer's stderr as lines: each passed on with ANSI codes stripped,
 * the last `tailBytes` characters kept for errors, the resume hint's thread id parsed.
 * Memory is bounded by `tailBytes` however much is written, even without
 * newlines.
 */
export class StderrLog {
  private readonly utf8 = new TextDecoder('utf-8');
  private partial = '';
  private lines: string[] = [];
  private size = 0;
  threadId: string | undefined;

  constructor(
    private readonly onLine: ((line: string) => void) | undefined,
    private readonly tailBytes = 64 * 1024,
  ) {}

  write(chunk: Uint8Array): void {
    this.text(this.utf8.decode(chunk, { stream: true }));
  }

  end(): void {
    this.text(this.utf8.decode());
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }

  /** The last lines, at most `tailBytes` characters. */
  get tail(): string {
    const open = this.partial ? [this.partial] : [];
    const tail = [...this.lines, ...open].join('\n');
    return tail.length > this.tailBytes ? tail.slice(-this.tailBytes) : tail;
  }

  private text(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop()!;
    if (this.partial.length > this.tailBytes) this.partial = this.partial.slice(-this.tailBytes);
    for (const part of parts) this.line(part);
  }

  private line(raw: string): void {
    const line = stripVTControlCharacters(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    const hint = RESUME_HINT.exec(line);
    if (hint) this.threadId = hint[1];
    const kept = line.length > this.tailBytes ? line.slice(-this.tailBytes) : line;
    this.lines.push(kept);
    this.size += kept.length + 1;
    while (this.size > this.tailBytes && this.lines.length > 1) this.size -= this.lines.shift()!.length + 1;
    this.onLine?.(line);
  }
}
