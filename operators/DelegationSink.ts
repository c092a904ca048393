import type { Delegation } from './Delegation.js';
import type { SubagentEvent } from './SubagentEvent.js';

/** What `DelegationTracker` reports. */
export interface DelegationSink {
  start(delegation: Delegation): void;
  event(delegation: Delegation, event: SubagentEvent): void;
  end(delegation: Delegation): void;
}
