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
  'eachEvent',
  'eventCodecs',
  'FlowControl',
  'fromJsonl',
  'followRun',
  'FollowGaveUpError',
  'ForgottenRunError',
  'RunEnd',
  'RunHubError',
  'RunInterruptedError',
  'RunRestartedError',
  'RunStatus',
  'UnknownRunError',
  'isKnownEvent',
  'toJsonl',
  'toJsonlStream',
  'toSseStream',
  'unknownEvent',
];
const operators = [
  'accumulateText',
  'briefArgs',
  'countToolCalls',
  'groupSubagents',
  'isToolCall',
  'jsonPreview',
  'ofType',
  'pairToolCalls',
  'plainViewAction',
  'RunModel',
  'runChanges',
  'sumUsage',
  'summarize',
  'viewActions',
  'watchRun',
];

const surface: Record<string, readonly string[]> = {
  'evosci-rx': [...events, ...operators, 'converse', 'fromJsonlFile', 'run'],
  'evosci-rx/events': events,
  'evosci-rx/flow': ['eachEvent', 'FlowControl', 'toJsonlStream', 'toSseStream'],
  'evosci-rx/operators': operators,
  'evosci-rx/testing': ['events', 'fakeEvoSci', 'fakeRun', 'recordedRuns', 'withFakeRuns'],
  'evosci-rx/viewer': ['liveView'],
  'evosci-rx/runs': [
    'FollowGaveUpError',
    'ForgottenRunError',
    'HubClosedError',
    'HubFullError',
    'IdempotencyKeyReusedError',
    'REQUEST_FIELDS',
    'RequestGuard',
    'RunEnd',
    'RunErrorInfo',
    'RunHubError',
    'RunInterruptedError',
    'RunRequestError',
    'RunRestartedError',
    'RunState',
    'RunStatus',
    'StartRequest',
    'UnknownRunError',
    'afterOf',
    'errorOfEnd',
    'hasSeenEnd',
    'requestTarget',
    'runEndOf',
    'runHub',
    'runsHandler',
    'toMessageEvents',
  ],
  'evosci-rx/otel': ['SEMCONV_VERSION', 'traceHeaders', 'traceRun', 'traceServedRuns'],
  'evosci-rx/jetstream': [
    'AttemptSupersededError',
    'BrokerError',
    'DeadLetterError',
    'DeadLetterRecord',
    'FinishedRecord',
    'RunHeaders',
    'RunRequest',
    'SerializedError',
    'StartedRecord',
    'StatusRecord',
    'StorageLimitError',
    'cancelRun',
    'deserializeError',
    'ensureStreams',
    'fromJetStream',
    'jetStreamRunHub',
    'layoutOf',
    'positionOf',
    'publishTo',
    'serializeError',
    'serveRuns',
    'streamConfigs',
    'submitRun',
    'watchRuns',
  ],
};

describe('the public surface', () => {
  it.each(Object.entries(surface))('%s exports exactly the names it is meant to', async (entry, names) => {
    const module = (await import(entry)) as Record<string, unknown>;
    expect(Object.keys(module).sort()).toEqual([...names].sort());
  });
});

describe('the package as shipped', () => {
  it('holds its licence, and source maps that carry their sources (src/ is not shipped)', async () => {
    const { execFileSync } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' }),
    ) as {
      files: { path: string }[];
    }[];
    const files = pack!.files.map((f) => f.path);
    expect(files).toContain('LICENSE');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // The build emits the tests and examples too (one program checks them all); they are not shipped.
    expect(files.filter((f) => /^dist\/(test|examples)\//.test(f))).toEqual([]);
    const maps = files.filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(map, 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      expect(sourcesContent?.filter((c) => typeof c === 'string')).toHaveLength(sources.length);
    }
  });
});
