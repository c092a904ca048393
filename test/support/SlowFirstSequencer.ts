import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files, longest first, as measured on the 2-core machine. Vitest
 * orders files by their last durations, which a fresh clone has not got: it
 * then runs the largest files first, and short files of long tests (the chaos
 * test, the soak) started last and stretched the run by up to half a minute.
 */
const LONGEST = [
  'test/jetstream/redelivery.test.ts',
  'test/web/dashboard.test.ts',
  'test/jetstream/chaos.test.ts',
  'test/bin/command.test.ts',
  'test/reliability/soak.test.ts',
  'test/examples/examples.test.ts',
  'test/reliability/hostile.test.ts',
  'test/process/run.test.ts',
  'test/flow/eachEvent.test.ts',
  'test/examples/readme.test.ts',
  'test/jetstream/fleet.test.ts',
  'test/jetstream/stall.test.ts',
  'test/jetstream/restart.test.ts',
  'test/package/commonjs.test.ts',
];

/** Vitest's order when it has timings; without them, the known longest files first, then its order. */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const timed = sorted.every((spec) => this.ctx.cache.getFileTestResults(this.key(spec)) !== undefined);
    if (timed) return sorted;
    const rank = (spec: TestSpecification): number => {
      const index = LONGEST.indexOf(relative(this.ctx.config.root, spec.moduleId));
      return index === -1 ? LONGEST.length : index;
    };
    return sorted.sort((a, b) => rank(a) - rank(b));
  }

  private key(spec: TestSpecification): string {
    return `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
  }
}
