// The dashboard page: starts runs through the runs API and shows each one
// live. `followRun` reads a run's events over Server-Sent Events (resuming
// after a dropped connection), and the library's operators derive what the
// card shows, exactly as in a Node app.
import { catchError, EMPTY, map } from 'rxjs';
import { followRun, type RunStatus } from 'evosci-rx/events';
import { viewActions } from 'evosci-rx/operators';
import { hasEnded, isScenario, metadataOf, SCENARIO_PROMPTS, SCENARIOS, type StartRequest } from '../api.js';
import { RunCard } from './render.js';

const runs = document.querySelector<HTMLElement>('[data-testid="runs"]')!;
const form = document.querySelector<HTMLFormElement>('[data-testid="start-form"]')!;
const scenario = form.querySelector<HTMLSelectElement>('[data-testid="scenario"]')!;
const empty = document.querySelector<HTMLElement>('[data-testid="empty"]')!;

/**
 * How long the page keeps asking an ended run for its thread id: the id
 * comes as its process exits, which may linger after `done` while EvoSci
 * saves its memory (`run()`'s `lingerMs`, 150 s).
 */
const LINGER_MS = 150_000;

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, init);
  const body = (await response.json()) as T | { error: string };
  if (!response.ok) throw new Error((body as { error?: string }).error ?? `${response.status} ${response.statusText}`);
  return body as T;
}

/** Starts a run (`POST /runs` answers its id) and shows its card. */
async function start(request: StartRequest): Promise<void> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) };
  const { id } = await api<{ id: string }>('/runs', init);
  show(await api<RunStatus>(`/runs/${encodeURIComponent(id)}`));
}

async function cancel(card: RunCard): Promise<void> {
  try {
    // Answered once the run's process is gone.
    card.setStatus(await api<RunStatus>(`/runs/${card.id}`, { method: 'DELETE' }));
  } catch (err) {
    card.note(`cancel failed: ${(err as Error).message}`);
  }
}

/** Starts the thread's next run with `text` as its prompt, as `converse()` takes a turn; whether it started. */
async function reply(origin: RunStatus, thread: string, text: string): Promise<boolean> {
  try {
    await start({ prompt: text, resume: thread, metadata: metadataOf(origin) });
    return true;
  } catch (err) {
    alert(`Could not send the reply: ${(err as Error).message}`);
    return false;
  }
}

/** Whether `error`, which the follow ended with, is how the run ended (`followRun` errors as the run did). */
function endedAs(status: RunStatus, error: unknown): boolean {
  return error instanceof Error && status.error?.name === error.name;
}

/**
 * The server's view of the run once its events have ended, asked again
 * until it has said all it will: how the run ended, and the thread it
 * reported. A follow that failed otherwise than as the run ended is noted.
 */
async function settle(card: RunCard, streamError: unknown): Promise<void> {
  const until = Date.now() + LINGER_MS;
  let waitMs = 250;
  try {
    let status = await api<RunStatus>(`/runs/${card.id}`);
    if (streamError !== undefined && !endedAs(status, streamError))
      card.note(`stream: ${(streamError as Error).message}`);
    for (;;) {
      card.setStatus(status);
      if ((hasEnded(status) && status.threadId !== undefined) || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(waitMs * 2, 5_000);
      status = await api<RunStatus>(`/runs/${card.id}`);
    }
  } catch (err) {
    card.note(`status: ${(err as Error).message}`);
  }
}

/** A card for the run, fed by its events from the first, however late the page comes. */
function show(status: RunStatus): void {
  const card = new RunCard(status, (c) => void cancel(c), reply);
  runs.prepend(card.element);
  empty.hidden = true;
  let streamError: unknown;
  followRun(`/runs/${encodeURIComponent(status.id)}/events`, { onDiagnostic: (issue) => card.diagnostic(issue) })
    .pipe(
      map(({ event }) => event),
      // A run that did not complete ends its follow with its error: the card shows what came, the status how it ended.
      catchError((err: unknown) => {
        streamError = err;
        return EMPTY;
      }),
      viewActions(),
    )
    .subscribe({
      next: (action) => card.apply(action),
      complete: () => void settle(card, streamError),
    });
}

for (const [name, description] of Object.entries(SCENARIOS)) {
  scenario.append(new Option(`${name}: ${description}`, name));
}
scenario.append(new Option('EvoSci: run the prompt (the demo replay when EvoSci is not installed)', 'prompt'));

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const chosen = data.get('scenario');
  const typed = data.get('prompt');
  const speed = Number(data.get('speed'));
  const prompt = (typeof typed === 'string' ? typed : '').trim();
  const request: StartRequest = {
    // A scenario replays a recorded run: without a prompt typed, the one it was given.
    prompt: prompt === '' && isScenario(chosen) ? SCENARIO_PROMPTS[chosen] : prompt,
    metadata: { ...(isScenario(chosen) && { scenario: chosen }), ...(speed > 0 && { speed: String(speed) }) },
  };
  start(request).catch((err: unknown) => alert(`Could not start the run: ${(err as Error).message}`));
});

// Runs started before the page was opened, oldest first so that the newest ends on top.
api<RunStatus[]>('/runs').then(
  (list) => list.forEach(show),
  () => undefined,
);
