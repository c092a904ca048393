import { signalTree } from './signalTree.js';

/** Signals that end Node when nothing handles them. */
const FATAL_SIGNALS: readonly NodeJS.Signals[] = process.platform === 'win32' ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP'];

const live = new Set<number>();

function killAll(): void {
  for (const group of live) signalTree(group, 'SIGKILL');
}

function onSignal(signal: NodeJS.Signals): void {
  // Runs first (prepended): any other listener means the app handles the signal itself,
  // and will unsubscribe or exit; the 'exit' hook covers the latter.
  if (process.listenerCount(signal) > 1) return;
  killAll();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  process.on('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.prependListener(signal, onSignal);
}

function uninstall(): void {
  process.off('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.off(signal, onSignal);
}

/**
 * Kills the process group of `pid` if this Node process exits, or dies of a
 * signal it does not handle, while the group is alive. Returns the function
 * that forgets it. The hooks are on `process` only while some group is
 * registered, so an idle library leaves no listener behind.
 *
 * The child runs in its own process group (so a terminal's Ctrl-C reaches the
 * app, which decides), which is also why Node's own death would not reach it.
 */
export function killGroupOnExit(pid: number): () => void {
  if (live.size === 0) install();
  live.add(pid);
  return () => {
    if (live.delete(pid) && live.size === 0) uninstall();
  };
}
