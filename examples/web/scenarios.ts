// What the fake CLI replays for each scenario of the dashboard demo.
import type { FakeStep } from 'evosci-rx/testing';
import { livePacing, transcript } from '../evosciCommand.js';
import type { Scenario } from './api.js';

/** A reply in a scenario's thread (`--resume`): the agent takes it as a new request and works on. */
function resumed(thread: string, pacing: ReturnType<typeof livePacing>): FakeStep {
  return {
    onResume: [
      { stderr: 'Loading agent…' },
      { transcript: transcript('demo-run.jsonl'), ...pacing },
      { resumeHint: thread },
    ],
  };
}

/** The fake CLI's script for a scenario, `speed` times faster than live. */
export function scenarioSteps(scenario: Scenario, speed = 1): FakeStep[] {
  const pacing = livePacing(speed);
  switch (scenario) {
    case 'demo':
      return [
        resumed('demo-7f3a9c', pacing),
        { stderr: 'Loading agent…' },
        { transcript: transcript('demo-run.jsonl'), ...pacing },
        { resumeHint: 'demo-7f3a9c' },
      ];
    case 'needs-input':
      return [
        resumed('demo-5b21e0', pacing),
        { stderr: 'Loading agent…' },
        { transcript: transcript('interrupt-run.jsonl'), ...pacing },
        { resumeHint: 'demo-5b21e0' },
      ];
    case 'sub-agent-approvals':
      return [
        resumed('demo-c0a1e7', pacing),
        { stderr: 'Loading agent…' },
        { transcript: transcript('parallel-approvals.jsonl'), ...pacing },
        { resumeHint: 'demo-c0a1e7' },
      ];
    case 'slow':
      // A few steps, then no more output until the run is stopped.
      return [
        { stderr: 'Loading agent…' },
        { transcript: transcript('demo-run.jsonl'), count: 30, ...pacing },
        { hang: true },
      ];
  }
}
