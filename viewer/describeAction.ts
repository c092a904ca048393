import type { Colors } from 'picocolors/types.js';
import { formatting as f } from './formatting.js';
import type { ViewAction } from './ViewAction.js';

/** A line of the plain (non-TTY) output for an action, or `undefined` for none. */
export function describeAction(action: ViewAction, c: Colors, width = 100): string | undefined {
  switch (action.kind) {
    case 'tool': {
      const { invocation, delegation } = action;
      if (invocation.status === 'running') return undefined;
      const where = delegation ? `  ${c.magenta(delegation.name)} › ` : '';
      const detail = invocation.status === 'failed' ? (invocation.result ?? '') : f.brief(invocation.args);
      return `${where}${f.icon(invocation, c, '')} ${invocation.name} ${c.dim(f.fit(detail, width - 30))} ${c.dim(f.seconds(invocation))}`.trimEnd();
    }
    case 'subagent-end': {
      // Printed at the end, not the start: by then a placeholder name has been replaced.
      const { name, description } = action.delegation;
      return `■ ${c.magenta(name)} ${c.dim(f.fit(description, width - name.length - 20))} (${action.events} events)`;
    }
    case 'error':
      return c.red(`error: ${action.event.message}`);
    default:
      return undefined;
  }
}
