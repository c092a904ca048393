import type { PanelDispatchCompleteEvent, PanelDispatchErrorEvent, PanelDispatchStartEvent } from '../src/events.js';
import type { PanelDispatchSummary } from './summaryTypes.js';

type PanelDispatch = { -readonly [K in keyof PanelDispatchSummary]: PanelDispatchSummary[K] };

/** Every panel dispatch of a run (sub-agent tasks started from code), in start order, as its events tell it. */
export class PanelBook {
  private readonly panels = new Map<string, PanelDispatch>();

  take(event: PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void {
    if (event.type === 'panel_dispatch_start') {
      this.panels.set(event.id, {
        id: event.id,
        evalId: event.eval_id,
        subagentType: event.subagent_type,
        label: event.label,
        description: event.description,
        status: 'unfinished',
      });
      return;
    }
    const panel = this.panels.get(event.id) ?? this.unannounced(event.id, event.eval_id);
    panel.durationMs = event.duration_ms;
    if (event.type === 'panel_dispatch_complete') panel.status = 'completed';
    else Object.assign(panel, { status: 'failed', error: event.error });
  }

  list(): PanelDispatchSummary[] {
    return [...this.panels.values()];
  }

  /** A completion whose start this stream did not show. */
  private unannounced(id: string, evalId: string): PanelDispatch {
    const panel: PanelDispatch = { id, evalId, subagentType: '', label: '', description: '', status: 'unfinished' };
    this.panels.set(id, panel);
    return panel;
  }
}
