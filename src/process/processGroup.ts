// The CLI runs in a process group of its own, so that the whole tree it starts
// can be signalled at once and a terminal's Ctrl-C reaches the app, which
// decides. That is also why Node's own death would not reach it: these
// helpers signal groups and kill the live ones when Node exits.

const POSIX = process.platform !== 'win32';

/** Sends `signal` to the process group led by `pid`, or to `pid` alone where groups do not exist. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(POSIX ? -pid : pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Signals that end Node when nothing handles them. */
const FATAL_SIGNALS: readonly NodeJS.Signals[] = POSIX ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : [];

const liveGroups = new Set<number>();

function killAll(): void {
  for (const group of liveGroups) signalGroup(group, 'SIGKILL');
}

/**
 * The listeners `signal-exit` (loaded by log-update, ora, write-file-atomic …)
 * has on each signal. Like this hook, it acts only when nothing else listens,
 * so each would wait for the other and neither act: its own count, which it
 * keeps on a global, tells them apart from the app's.
 */
function exitHookListeners(): number {
  const holders = [
    (globalThis as Record<symbol, unknown>)[Symbol.for('signal-exit emitter')],
    (process as unknown as Record<string, unknown>)['__signal_exit_emitter__'],
  ];
  let count = 0;
  for (const holder of holders) {
    const n = (holder as { count?: unknown } | undefined)?.count;
    if (typeof n === 'number') count += n;
  }
  return count;
}

function onFatalSignal(signal: NodeJS.Signals): void {
  // Runs first (prepended): a listener of the app's means it handles the signal itself,
  // and will unsubscribe or exit; the 'exit' hook covers the latter.
  if (process.listenerCount(signal) - 1 - exitHookListeners() > 0) return;
  killAll();
  uninstall();
  // With this hook gone, signal-exit (if loaded) sees only its own listeners: it runs its exit handlers
  // and re-raises; without it, the re-raised signal ends Node as it would have.
  process.kill(process.pid, signal);
}

function install(): void {
  process.on('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.prependListener(signal, onFatalSignal);
}

function uninstall(): void {
  process.off('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.off(signal, onFatalSignal);
}

/**
 * Kills the process group of `pid` if this Node process exits, or dies of a
 * signal it does not handle, while the group is alive. Returns the function
 * that forgets it. The hooks are on `process` only while some group is
 * registered, so an idle library leaves no listener behind.
 */
export function killGroupOnExit(pid: number): () => void {
  if (liveGroups.size === 0) install();
  liveGroups.add(pid);
  return () => {
    if (liveGroups.delete(pid) && liveGroups.size === 0) uninstall();
  };
}
