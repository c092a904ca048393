import type { ViewState } from './ViewState.js';

/** The view before the first event. */
export const initialView: ViewState = {
  thinking: '',
  text: '',
  tools: new Map(),
  delegations: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  errors: [],
  summary: undefined,
};
