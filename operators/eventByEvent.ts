import { concat, defer, mergeMap, type Observable } from 'rxjs';

/**
 * What a plain tracker reports while it takes one event, collected for
 * `mergeMap` to pass on in order.
 */
export class Reports<T> {
  private items: T[] = [];

  readonly push = (item: T): void => {
    this.items.push(item);
  };

  /** What was reported since the last call; most events report nothing, and then no array is made. */
  drain(): readonly T[] {
    if (this.items.length === 0) return NONE;
    const items = this.items;
    this.items = [];
    return items;
  }
}

const NONE: readonly never[] = [];

/**
 * A tracker driven by a source, as an Observable of its reports: each event
 * is given to `take`, then what it reported is emitted; when the source
 * completes, `finish` closes what is still open, and its reports follow. An
 * error of the source is passed on, with no `finish`.
 */
export function eventByEvent<E, T>(
  source: Observable<E>,
  reports: Reports<T>,
  take: (event: E) => void,
  finish: () => void,
): Observable<T> {
  return concat(
    source.pipe(
      mergeMap((event) => {
        take(event);
        return reports.drain();
      }),
    ),
    defer(() => {
      finish();
      return reports.drain();
    }),
  );
}
