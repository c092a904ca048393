/**
 * Where an event of `fromJetStream` is in its run: pass it as `after` to a
 * new subscription to go on with the next event.
 */
export interface EventPosition {
  /** The run the event belongs to. */
  readonly runId: string;
  /** The attempt that wrote it. */
  readonly attempt: number;
  /** 1-based position of the event in its attempt (`EvoSci-Seq`). */
  readonly sequence: number;
  /** The stream sequence to read from again so that nothing after this event is missed. */
  readonly resumeFrom: number;
}

const positions = new WeakMap<object, EventPosition>();

/**
 * The position of an event emitted by `fromJetStream`, `undefined` for any
 * other object. Kept beside the event, which stays the plain wire object.
 *
 * ```ts
 * let last: EventPosition | undefined;
 * fromJetStream(nc, id).pipe(tap((e) => (last = positionOf(e)))).subscribe();
 * // later: fromJetStream(nc, id, { after: last })
 * ```
 */
export function positionOf(event: object): EventPosition | undefined {
  return positions.get(event);
}

/** Records where an event about to be emitted is. */
export function placeEvent(event: object, position: EventPosition): void {
  positions.set(event, position);
}
