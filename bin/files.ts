// The files the command reads (`view`) and writes (`--record`), FIFOs
// included. A FIFO is opened without blocking and read or written through
// the event loop, never by a blocked thread: a blocked open, read or write
// would hold the process after Ctrl-C, even past process.exit().
import { closeSync, constants, createReadStream, createWriteStream, openSync, statSync, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { toJsonl } from '../src/events/decode/jsonl.js';
import type { EvoEvent } from '../src/events/codecs.js';
import type { Stop } from './stop.js';

/** A failure the command reports on one line: exit status 1. */
export class CommandError extends Error {}

/** How often a `--record` FIFO is tried again while it has no reader. */
const READER_POLL_MS = 100;

function reason(err: unknown): string {
  return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
}

/** The file's kind, or a `CommandError` that says why it cannot be read. */
export function checkReadable(file: string): Stats {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch (err) {
    throw new CommandError(`cannot read ${file}: ${reason(err)}`);
  }
  if (stat.isDirectory()) throw new CommandError(`cannot read ${file}: it is a directory`);
  return stat;
}

/** The transcript `view` reads: a file, a FIFO, or stdin for `-`. */
export function transcriptSource(file: string): Readable {
  if (file === '-') return process.stdin;
  const stat = checkReadable(file);
  if (!stat.isFIFO()) return createReadStream(file);
  // Open at once, writer or not; the stream waits for one, and ends when it closes.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  return new Socket({ fd, readable: true, writable: false });
}

/** `--record`: where the events are written as JSONL. */
export class Recording {
  private readonly closed: Promise<void>;

  constructor(
    private readonly file: Writable,
    broken: (err: Error) => void,
  ) {
    // A full disk or a reader gone says so only when the data is flushed: the command waits for that before it ends.
    this.closed = new Promise<void>((resolve) => {
      file.on('error', (err) => {
        broken(err);
        resolve();
      });
      file.on('close', resolve);
    });
  }

  write(event: EvoEvent): void {
    this.file.write(toJsonl(event));
  }

  end(): void {
    this.file.end();
  }

  /** Resolves once everything written is flushed, or lost to an error. */
  finished(): Promise<void> {
    return this.closed;
  }

  /** Drops what is not written yet: for a reader that stopped reading, after a signal. */
  abandon(): void {
    this.file.destroy();
  }
}

/**
 * Opens `path` for `--record`, so that a wrong path fails before the run
 * starts. A FIFO is opened once a reader has opened it, which is said on
 * stderr; `undefined` if a signal came first.
 */
export async function openRecording(path: string, stop: Stop): Promise<Recording | undefined> {
  const broken = stop.breaks(`recording to ${path}`);
  let fifo = false;
  try {
    fifo = statSync(path).isFIFO();
  } catch {
    // Not there yet: a file to create.
  }
  if (!fifo) {
    try {
      closeSync(openSync(path, 'w'));
    } catch (err) {
      throw new CommandError(`cannot record to ${path}: ${(err as Error).message}`);
    }
    return new Recording(createWriteStream(path), broken);
  }
  const fd = await fifoWriter(path, stop);
  if (fd === undefined) return undefined;
  const recording = new Recording(new Socket({ fd, readable: false, writable: true }), broken);
  // A reader that stops reading would hold the end of the command forever.
  void stop.signalled.then(() => recording.abandon());
  return recording;
}

/** The FIFO's write end, opened without blocking once it has a reader; `undefined` if a signal came first. */
async function fifoWriter(path: string, stop: Stop): Promise<number | undefined> {
  for (let said = false; ; said = true) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      // ENXIO: no reader yet.
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO')
        throw new CommandError(`cannot record to ${path}: ${(err as Error).message}`);
    }
    if (!said) process.stderr.write(`evosci-rx: waiting for a reader of ${path} (--record)…\n`);
    if (await stop.pause(READER_POLL_MS)) return undefined;
  }
}
