import type { ViewAction } from './ViewAction.js';
import type { ViewDelegation } from './ViewDelegation.js';
import type { ViewState } from './ViewState.js';

function updateDelegation(
  state: ViewState,
  run: ViewDelegation['run'],
  change: (d: ViewDelegation) => ViewDelegation,
): ViewState {
  return { ...state, delegations: state.delegations.map((d) => (d.run === run ? change(d) : d)) };
}

/** Applies one action to the view state; a new state, the old one untouched. */
export function reduceView(state: ViewState, action: ViewAction): ViewState {
  switch (action.kind) {
    case 'thinking':
      return { ...state, thinking: action.content };
    case 'text':
      return { ...state, text: action.text };
    case 'tool': {
      const { invocation, delegation } = action;
      if (delegation) {
        return updateDelegation(state, delegation, (d) => ({ ...d, tools: new Map(d.tools).set(invocation.key, invocation) }));
      }
      return { ...state, tools: new Map(state.tools).set(invocation.key, invocation) };
    }
    case 'subagent-start':
      return { ...state, delegations: [...state.delegations, { run: action.delegation, tools: new Map(), events: undefined }] };
    case 'subagent-end':
      return updateDelegation(state, action.delegation, (d) => ({ ...d, events: action.events }));
    case 'usage':
      return { ...state, usage: action.usage };
    case 'error':
      return { ...state, errors: [...state.errors, action.event.message] };
    case 'summary':
      return { ...state, summary: action.summary };
  }
}
