import type { PanelDispatchEvent } from './runChange.js';
import type { PanelDispatchSummary } from './summaryTypes.js';

/** How many ended dispatches are remembered, for an end sent twice. */
const REMEMBERED_ENDED = 1024;

/**
 * The panel dispatches of a run (sub-agent tasks started from code), by id:
 * each event gives the dispatch's new state, a new object. The open ones are
 * kept, and the latest ended ones (a second end updates the first); who
 * wants every one keeps the states it is given.
 */
export class PanelBook {
  private readonly open = new Map<string, PanelDispatchSummary>();
  private readonly ended = new Map<string, PanelDispatchSummary>();

  take(event: PanelDispatchEvent): PanelDispatchSummary {
    if (event.type === 'panel_dispatch_start') {
      const started: PanelDispatchSummary = {
        id: event.id,
        evalId: event.eval_id,
        subagentType: event.subagent_type,
        label: event.label,
        description: event.description,
        status: 'unfinished',
      };
      this.open.set(event.id, started);
      return started;
    }
    const before = this.open.get(event.id) ?? this.ended.get(event.id) ?? unannounced(event.id, event.eval_id);
    this.open.delete(event.id);
    const durationMs = event.duration_ms;
    const after: PanelDispatchSummary =
      event.type === 'panel_dispatch_complete'
        ? { ...before, status: 'completed', durationMs }
        : { ...before, status: 'failed', durationMs, error: event.error };
    this.remember(after);
    return after;
  }

  private remember(ended: PanelDispatchSummary): void {
    this.ended.delete(ended.id);
    this.ended.set(ended.id, ended);
    if (this.ended.size > REMEMBERED_ENDED) this.ended.delete(this.ended.keys().next().value!);
  }
}

/** A completion whose start this stream did not show. */
function unannounced(id: string, evalId: string): PanelDispatchSummary {
  return { id, evalId, subagentType: '', label: '', description: '', status: 'unfinished' };
}
