import { randomUUID } from 'node:crypto';

/** A run id: letters, digits, `_` and `-`, as a JetStream subject token and a file name take it. */
export const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function newRunId(): string {
  return randomUUID();
}
