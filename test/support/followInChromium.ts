// `followRun` in a real browser page, for the browser tests of a run hub's
// event stream. The page is bundled from the source (the package entries
// resolve to dist/, which a test must not rebuild) and served by Playwright
// at the stream's own origin, so that its requests are same-origin: no CORS
// needed from the server under test.
import { build } from 'esbuild';
import type { Page, Route } from 'playwright-core';
import type * as FollowRunModule from '../../src/runs/followRun.js';
import type { FollowRunOptions, RefollowRunOptions } from '../../src/runs/followRun.js';

/**
 * What `followRun` gave in the page: the indexes and types it emitted, in
 * order (a `RunRestart` as index -1 of type `restart`), and how it ended.
 */
export interface FollowedInPage {
  readonly indexes: number[];
  readonly types: string[];
  readonly completed: boolean;
  /** How it ended if not completed; `status` (a `RunHubError`'s HTTP status) only when `PageReport.errorStatus` asks. */
  readonly error?: { readonly name: string; readonly message: string; readonly status?: number };
  /** The attempt each `RunRestart` named, in order: only when `PageReport.restartAttempts` asks. */
  readonly restartAttempts?: number[];
}

/** What a test asks the page to report besides the indexes, types and how the follow ended. */
export interface PageReport {
  /** The `status` of the error the follow ended with, when it has one. */
  readonly errorStatus?: boolean;
  /** The attempt each `RunRestart` named. */
  readonly restartAttempts?: boolean;
}

/** The options a test passes into the page: plain data, no functions. */
export type PageFollowOptions =
  Omit<FollowRunOptions, 'fetch' | 'onDiagnostic'> | Omit<RefollowRunOptions, 'fetch' | 'onDiagnostic'>;

/** Where the page and its script are served, beside the stream. */
const PAGE_PATH = '/__followRun__/';
/** The global the bundle sets: the module's exports. */
const GLOBAL = 'evosciFollowRun';
const SOURCE = new URL('../../src/runs/followRun.ts', import.meta.url).pathname;

let script: Promise<string> | undefined;
/** Numbers the functions exposed to pages: a name is exposed once per page. */
let exposed = 0;

/** `src/runs/followRun.ts` and what it imports as one classic script; fails if it pulls in a Node built-in. */
function followRunScript(): Promise<string> {
  script ??= build({
    entryPoints: [SOURCE],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: GLOBAL,
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  }).then((result) => {
    const nodeOnly = Object.keys(result.metafile.inputs).filter((input) => input.startsWith('node:'));
    if (nodeOnly.length > 0) throw new Error(`followRun pulls Node built-ins into the browser: ${nodeOnly.join(', ')}`);
    return result.outputFiles[0]!.text;
  });
  return script;
}

/**
 * Opens a page at the origin of `url`, runs `followRun(url, options)` in it,
 * and resolves with what it emitted once it completes or errors. `onIndex`
 * hears of each event as the page gets it: the sign a server may wait for.
 * `reporting` asks for more of what happened than indexes, types and ending.
 *
 * ```ts
 * const { indexes, completed } = await followInChromium(page, server.url, { retryDelayMs: 0 });
 * ```
 */
export async function followInChromium(
  page: Page,
  url: string,
  options: PageFollowOptions = {},
  onIndex?: (index: number) => void,
  reporting: PageReport = {},
): Promise<FollowedInPage> {
  const code = await followRunScript();
  const report = onIndex && `__followRunIndex${exposed++}`;
  if (report) await page.exposeFunction(report, onIndex);
  const pattern = `${new URL(url).origin}${PAGE_PATH}**`;
  const serve = (route: Route) =>
    new URL(route.request().url()).pathname.endsWith('.js')
      ? route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: code })
      : route.fulfill({
          contentType: 'text/html; charset=utf-8',
          body: '<!doctype html><meta charset="utf-8"><title>followRun</title><script src="followRun.js"></script>',
        });
  await page.route(pattern, serve);
  try {
    await page.goto(`${new URL(url).origin}${PAGE_PATH}`);
  } finally {
    await page.unroute(pattern, serve);
  }
  return page.evaluate(followInPage, { url, options, name: GLOBAL, report, reporting });
}

/** Runs in the page: follows the run, telling `report` of each index, and resolves with what came. */
function followInPage(args: {
  url: string;
  options: PageFollowOptions;
  name: string;
  report: string | undefined;
  reporting: PageReport;
}): Promise<FollowedInPage> {
  const scope = globalThis as unknown as Record<string, unknown>;
  const { followRun } = scope[args.name] as typeof FollowRunModule;
  const report = args.report === undefined ? undefined : (scope[args.report] as (index: number) => Promise<void>);
  const indexes: number[] = [];
  const types: string[] = [];
  const attempts: number[] = [];
  const { errorStatus, restartAttempts } = args.reporting;
  const ended = (completed: boolean, err?: Error): FollowedInPage => {
    const status = (err as { status?: unknown } | undefined)?.status;
    return {
      indexes,
      types,
      completed,
      ...(err && {
        error: {
          name: err.name,
          message: err.message,
          ...(errorStatus && typeof status === 'number' && { status }),
        },
      }),
      ...(restartAttempts && { restartAttempts: attempts }),
    };
  };
  return new Promise((resolve) => {
    followRun(args.url, args.options).subscribe({
      next: (item) => {
        if ('restarted' in item) {
          indexes.push(-1);
          types.push('restart');
          attempts.push(item.restarted.attempt);
          return;
        }
        indexes.push(item.index);
        types.push(item.event.type);
        void report?.(item.index);
      },
      complete: () => resolve(ended(true)),
      error: (err: Error) => resolve(ended(false, err)),
    });
  });
}
