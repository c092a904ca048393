// viewActions() in a Redux store, judged by Redux Toolkit's own middleware: the live actions carry each delegation's
// `events$`, which its serializability check flags; plainViewAction gives actions that a store keeps as they are.
import { readdirSync, readFileSync } from 'node:fs';
import { configureStore, createSlice, type PayloadAction } from '@reduxjs/toolkit';
import { lastValueFrom, map, tap, type OperatorFunction } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { fromJsonl } from '../../src/index.js';
import { plainViewAction, viewActions, type PlainViewAction, type ViewAction } from '../../operators/index.js';

const folder = new URL('../../examples/transcripts/', import.meta.url);
const transcripts = readdirSync(folder).filter((name) => name.endsWith('.jsonl'));

/** A store that keeps every action it is given, as an app's slice of a run would; immer freezes what it keeps. */
function runStore() {
  const run = createSlice({
    name: 'run',
    initialState: { actions: [] as unknown[] },
    reducers: {
      viewed: (state, action: PayloadAction<unknown>) => {
        state.actions.push(action.payload);
      },
    },
  });
  // The default middleware with its checks as they are; only the timing warnings are off, for a busy machine.
  const store = configureStore({
    reducer: run.reducer,
    middleware: (defaults) =>
      defaults({ serializableCheck: { warnAfter: Infinity }, immutableCheck: { warnAfter: Infinity } }),
  });
  return { store, viewed: run.actions.viewed };
}

/** Each action of a transcript's run dispatched as it comes: what the store kept, and how many there were. */
async function dispatchRun<A>(name: string, form: OperatorFunction<ViewAction, A>) {
  const { store, viewed } = runStore();
  let emitted = 0;
  await lastValueFrom(
    fromJsonl(readFileSync(new URL(name, folder), 'utf8')).pipe(
      viewActions(),
      form,
      tap((action) => {
        emitted++;
        store.dispatch(viewed(action));
      }),
    ),
  );
  return { kept: store.getState().actions, emitted };
}

describe('viewActions() in a Redux Toolkit store', () => {
  let errors: MockInstance<typeof console.error>;
  beforeEach(() => {
    errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => errors.mockRestore());

  /** The paths RTK's serializability check reported, from its messages. */
  const flagged = (): string[] =>
    errors.mock.calls.map(([message]) => /in the path: `([^`]*)`/.exec(String(message))?.[1] ?? String(message));

  it('flags the live actions: a delegation carries its events$ (so this test sees a flag when there is one)', async () => {
    const { kept } = await dispatchRun(
      'demo-run.jsonl',
      map((action) => action),
    );
    const delegated = (kept as ViewAction[]).filter((action) => 'delegation' in action && action.delegation);
    expect(delegated.length).toBeGreaterThan(0);
    expect(flagged().length).toBeGreaterThan(0);
    expect(new Set(flagged().map((path) => path.replace(/^(payload|actions\.\d+)\./, '')))).toEqual(
      new Set(['delegation.events$']),
    );
  });

  it.each(transcripts)('takes every plainViewAction() of %s with no warning, and keeps them', async (name) => {
    const { kept, emitted } = await dispatchRun(name, map(plainViewAction));
    expect(flagged()).toEqual([]);
    expect(emitted).toBeGreaterThan(0);
    expect(kept).toHaveLength(emitted);
  });

  it('keeps a delegation as it was when each action was made, not as it is later', async () => {
    const { kept } = await dispatchRun('demo-run.jsonl', map(plainViewAction));
    const starts = (kept as PlainViewAction[]).filter((action) => action.kind === 'subagent-start');
    const ends = (kept as PlainViewAction[]).filter((action) => action.kind === 'subagent-end');
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.map((action) => action.delegation.ended)).toEqual(starts.map(() => false));
    expect(ends.map((action) => action.delegation.ended)).toEqual(ends.map(() => true));
    for (const action of kept as PlainViewAction[]) {
      if ('delegation' in action && action.delegation) expect(Object.keys(action.delegation)).not.toContain('events$');
    }
  });
});
