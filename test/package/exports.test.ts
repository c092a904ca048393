import { describe, expect, it } from 'vitest';

// Each entry point's exported names, pinned: a new export is a decision, taken here.
const events = [
  'ReviewConfig',
  'PanelDispatchStartEvent',
  'PanelDispatchErrorEvent',
  'PanelDispatchCompleteEvent',
  'AskUserQuestion',
  'ActionRequest',
  'AskUserEvent',
  'CancelledError',
  'DecodeError',
  'DecodeIssue',
  'DoneEvent',
  'ErrorEvent',
  'EvoEvent',
  'EvoSciError',
  'ExitError',
  'InterruptEvent',
  'SpawnError',
  'SubagentEndEvent',
  'SubagentStartEvent',
  'SubagentTextEvent',
  'SubagentToolCallEvent',
  'SubagentToolResultEvent',
  'SummarizationEvent',
  'SummarizationStartEvent',
  'TextEvent',
  'ThinkingEvent',
  'TokenCount',
  'TimeoutError',
  'ToolCallEvent',
  'ToolResultEvent',
  'ToolSelectionEvent',
  'TruncatedStreamError',
  'UnknownEvent',
  'UsageStatsEvent',
  'decodeLine',
  'eventCodecs',
  'fromJsonl',
  'isKnownEvent',
  'toJsonl',
];
const operators = ['accumulateText', 'groupSubagents', 'ofType', 'pairToolCalls', 'sumUsage', 'summarize'];

const surface: Record<string, readonly string[]> = {
  'evosci-rx': [...events, ...operators, 'converse', 'run'],
  'evosci-rx/events': events,
  'evosci-rx/operators': operators,
  'evosci-rx/testing': ['events', 'fakeEvoSci'],
  'evosci-rx/viewer': ['liveView'],
};

describe('the public surface', () => {
  it.each(Object.entries(surface))('%s exports exactly the names it is meant to', async (entry, names) => {
    const module = (await import(entry)) as Record<string, unknown>;
    expect(Object.keys(module).sort()).toEqual([...names].sort());
  });
});
