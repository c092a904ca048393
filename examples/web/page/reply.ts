// The reply box of an ended run: a next turn of its thread, as `converse()`
// takes one (a new run with `--resume`), said for what it is.
import type { RunOutcome } from 'evosci-rx/operators';

/** What EvoSci does with a reply (a run with `--resume` starts a new turn): it never answers the paused call. */
const HONEST_NOTE =
  'EvoSci takes this as a new message in the same thread (a new run with --resume), not as the answer to the ' +
  'paused question: that call gets no result, and the agent reads your message as a new request that follows it. ' +
  'So say everything it needs, e.g. "Use ImageNet-1k, with at most 4 GPU hours".';

/** A form that sends a reply in a run's thread, shown once the run has ended and reported its thread. */
export class ReplyBox {
  readonly element: HTMLFormElement;
  private readonly title = document.createElement('h3');
  private readonly text = document.createElement('textarea');
  private readonly send = document.createElement('button');
  private readonly status = document.createElement('p');
  private thread: string | undefined;

  /** `onReply` starts the run and says whether it did. */
  constructor(private readonly onReply: (thread: string, text: string) => Promise<boolean>) {
    const note = document.createElement('p');
    note.className = 'note';
    note.dataset['testid'] = 'reply-note';
    note.textContent = HONEST_NOTE;
    this.text.dataset['testid'] = 'reply-text';
    this.text.rows = 2;
    this.text.required = true;
    this.text.setAttribute('aria-label', 'Reply');
    this.send.type = 'submit';
    this.send.dataset['testid'] = 'reply-send';
    this.send.textContent = 'Send as the next message';
    this.status.dataset['testid'] = 'reply-status';
    this.element = document.createElement('form');
    this.element.className = 'reply';
    this.element.dataset['testid'] = 'reply';
    this.element.hidden = true;
    this.element.append(this.title, note, this.text, this.send, this.status);
    this.element.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
  }

  /** Shows the box for `thread`; a run that stopped to ask is answered in words, as a new message. */
  open(thread: string, outcome: RunOutcome | undefined): void {
    this.thread = thread;
    this.title.textContent =
      outcome === 'needs-input' ? `Reply to its questions in thread ${thread}` : `Continue thread ${thread}`;
    this.element.hidden = false;
  }

  private async submit(): Promise<void> {
    const text = this.text.value.trim();
    if (this.thread === undefined || text === '') return;
    this.send.disabled = true;
    this.status.textContent = 'starting the next run…';
    const started = await this.onReply(this.thread, text);
    this.status.textContent = started ? 'Sent: the next run of the thread is shown above.' : '';
    if (started) this.text.value = '';
    this.send.disabled = false;
  }
}
