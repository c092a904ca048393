// A run's frames written to a Node response with backpressure, and a body
// cut off on purpose. No web stream stands between: each frame is made once,
// queued, and leaves with the others of its turn (`FrameQueue`), in a few
// large writes rather than one per event.
import type { ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';
import type { FlowControl } from '../../common/FlowControl.js';
import type { ByteFraming } from '../../flow/ObservableByteSource.js';
import { FrameQueue, type SendFailure } from './FrameQueue.js';

/**
 * Writes the frames of `source$` to `res` as `framing` makes them, pausing
 * the source through `flow`, its tap, while the client is slow, and ends
 * `res` after the last words. A client that goes away unsubscribes the
 * source. Never rejects: a source that errors without `framing.error`, or a
 * write that throws, resolves with the error, every frame before it written
 * and `res` left open for the caller to end as it sees fit.
 */
export async function sendFrames<T>(
  res: ServerResponse,
  source$: Observable<T>,
  framing: ByteFraming<T>,
  flow: FlowControl,
): Promise<SendFailure> {
  const queue = new FrameQueue(res, flow);
  let index = 0;
  let quiet = true;
  const push = (text: string | undefined) => {
    if (text === undefined) return;
    quiet = false;
    queue.push(text);
  };
  const subscription = source$.subscribe({
    next: (value) => push(framing.frame(value, index++)),
    complete: () => {
      push(framing.complete());
      queue.finish('end');
    },
    error: (error: unknown) => {
      if (!framing.error) return queue.finish({ error });
      push(framing.error(error));
      queue.finish('end');
    },
  });
  const { heartbeat } = framing;
  const beat =
    heartbeat && heartbeat.everyMs !== Infinity
      ? setInterval(() => {
          // Only a stream that has said nothing for a whole period, and whose reader keeps up, needs one.
          if (quiet && queue.idle) push(heartbeat.text);
          quiet = true;
        }, heartbeat.everyMs)
      : undefined;
  try {
    return await queue.done;
  } finally {
    clearInterval(beat);
    subscription.unsubscribe();
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
