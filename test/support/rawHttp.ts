// Bytes sent as they are over a TCP socket, for requests no HTTP client
// would write (a broken request line, two Host headers, a bad chunk), and
// the answer read back until the server closes the connection.
import { connect } from 'node:net';
import { PATIENCE_MS } from './processes.js';

export interface RawAnswer {
  /** The status of the answer, `undefined` when the connection closed with none. */
  readonly status: number | undefined;
  /** Whether it began with a well-formed status line and header block. */
  readonly wellFormed: boolean;
  /** Its head (status line and headers), or the first bytes of whatever came. */
  readonly head: string;
  /** Its body, as latin1 text. */
  readonly body: string;
}

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3}) [^\r\n]*$/;
const HEADER_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[ \t]*[^\r\n]*$/;

/** The first answer in `bytes`, read as HTTP/1.1 frames it. */
export function parseAnswer(bytes: Buffer): RawAnswer {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: undefined, wellFormed: text === '', head: text.slice(0, 200), body: '' };
  const [statusLine = '', ...headers] = text.slice(0, end).split('\r\n');
  const match = STATUS_LINE.exec(statusLine);
  return {
    status: match ? Number(match[1]) : undefined,
    wellFormed: match !== null && headers.every((h) => HEADER_LINE.test(h)),
    head: text.slice(0, Math.min(end, 2000)),
    body: text.slice(end + 4),
  };
}

/**
 * Sends `request` to `port` on loopback and resolves with the answer once
 * the server has closed the connection (the request should say
 * `Connection: close`). A reset is a close: a server may refuse bytes
 * before they are all written. Rejects if the connection is still open
 * after `withinMs`: a request left unanswered.
 */
export function sendRaw(port: number, request: string | Buffer, withinMs = PATIENCE_MS): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${withinMs} ms; so far: ${Buffer.concat(chunks).toString('latin1')}`));
    }, withinMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // EPIPE, ECONNRESET: the server closed first; what it said is in `chunks`.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks)));
    });
  });
}
