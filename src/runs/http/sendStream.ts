// A web stream written to a Node response with backpressure, and a body cut
// off on purpose. `Readable.fromWeb(body).pipe(res)` would do neither safely:
// an error of the stream is an 'error' event no one listens to (the process
// exits), and a destroyed readable drops the chunks it still holds.
import type { ServerResponse } from 'node:http';

/** How sending a body ended: `undefined` when it was sent whole or the client went away; else the stream's error. */
export type SendFailure = { readonly error: unknown } | undefined;

/** Resolves once `res` can take more, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Writes `body` to `res` chunk by chunk, waiting while the client is slow,
 * and ends `res` when the stream ends. A client that goes away cancels the
 * stream (its source is unsubscribed). Never rejects: a stream that errors
 * resolves with its error, every chunk before it written, and `res` left
 * open for the caller to end as it sees fit.
 */
export async function sendStream(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<SendFailure> {
  const reader = body.getReader();
  // A response already closed will not say so again.
  let closed = res.destroyed;
  const gone = () => {
    closed = true;
    reader.cancel().catch(() => undefined);
  };
  if (closed) gone();
  else res.once('close', gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (closed) return undefined;
      if (done) {
        res.end();
        return undefined;
      }
      if (!res.write(value) && !closed) await drained(res);
    }
  } catch (error) {
    return closed ? undefined : { error };
  } finally {
    res.off('close', gone);
  }
}

/**
 * Ends the connection under a body that has not ended: what was written is
 * flushed, then the socket closes without the chunked body's last chunk, so
 * that the client sees a body cut short (`fetch`'s reader rejects, curl says
 * "transfer closed with outstanding read data remaining") rather than one
 * that ended.
 */
export function cutOff(res: ServerResponse): void {
  const socket = res.socket;
  if (socket && !socket.destroyed) socket.destroySoon();
  else res.destroy();
}
