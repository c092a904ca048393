// The dashboard page: starts runs on the server and shows each one live. A
// run's JSONL arrives as a fetch body; `fromJsonl(response.body)` decodes
// it, and the library's operators derive what the card shows, exactly as in
// a Node app.
import { defer, switchMap } from 'rxjs';
import { fromJsonl } from 'evosci-rx/events';
import { viewActions } from 'evosci-rx/operators';
import { isScenario, SCENARIOS, type RunInfo, type StartRequest } from '../api.js';
import { RunCard } from './render.js';

const runs = document.querySelector<HTMLElement>('[data-testid="runs"]')!;
const form = document.querySelector<HTMLFormElement>('[data-testid="start-form"]')!;
const scenario = form.querySelector<HTMLSelectElement>('[data-testid="scenario"]')!;
const empty = document.querySelector<HTMLElement>('[data-testid="empty"]')!;

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, init);
  const body = (await response.json()) as T | { error: string };
  if (!response.ok) throw new Error((body as { error?: string }).error ?? `${response.status} ${response.statusText}`);
  return body as T;
}

async function cancel(card: RunCard): Promise<void> {
  try {
    card.setInfo(await api<RunInfo>(`/runs/${card.id}`, { method: 'DELETE' }));
  } catch (err) {
    card.note(`cancel failed: ${(err as Error).message}`);
  }
}

/** Starts the thread's next run with `text` as its prompt, as `converse()` takes a turn; whether it started. */
async function reply(thread: string, text: string): Promise<boolean> {
  try {
    show(await api<RunInfo>('/runs', { method: 'POST', ...json({ resume: thread, prompt: text }) }));
    return true;
  } catch (err) {
    alert(`Could not send the reply: ${(err as Error).message}`);
    return false;
  }
}

function json(body: StartRequest): RequestInit {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The server's view of the run, asked again until its process has exited: only then is its thread id known. */
function refresh(card: RunCard, id: string): void {
  api<RunInfo>(`/runs/${id}`).then(
    (latest) => {
      card.setInfo(latest);
      if (!latest.exited) setTimeout(() => refresh(card, id), 250);
    },
    (err: unknown) => card.note(String(err)),
  );
}

/** A card for the run, fed by its event stream (from the run's first event, however late the page comes). */
function show(info: RunInfo): void {
  const card = new RunCard(info, (c) => void cancel(c), reply);
  runs.prepend(card.element);
  empty.hidden = true;
  defer(() => fetch(`/runs/${info.id}/events`))
    .pipe(
      switchMap((response) => {
        if (!response.ok || response.body === null)
          throw new Error(`events: ${response.status} ${response.statusText}`);
        return fromJsonl(response.body, { onDiagnostic: (issue) => card.diagnostic(issue) });
      }),
      viewActions(),
    )
    .subscribe({
      next: (action) => card.apply(action),
      error: (err: unknown) => {
        card.note(`stream: ${err instanceof Error ? err.message : String(err)}`);
        refresh(card, info.id);
      },
      // The stream ends with the run: ask the server how it ended.
      complete: () => refresh(card, info.id),
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
  const prompt = (typeof typed === 'string' ? typed : '').trim();
  const speed = Number(data.get('speed'));
  const request: StartRequest = {
    ...(isScenario(chosen) && { scenario: chosen }),
    ...(prompt !== '' && { prompt }),
    ...(speed > 0 && { speed }),
  };
  api<RunInfo>('/runs', { method: 'POST', ...json(request) }).then(show, (err: unknown) =>
    alert(`Could not start the run: ${(err as Error).message}`),
  );
});

// Runs started before the page was opened, oldest first so that the newest ends on top.
api<RunInfo[]>('/runs').then(
  (list) => list.forEach(show),
  () => undefined,
);
