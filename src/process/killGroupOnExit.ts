import { onExit } from 'signal-exit';
import { signalTree } from './signalTree.js';

const live = new Set<number>();
let removeHook: (() => void) | undefined;

/**
 * Kills the group of `pid` if this Node process exits (or dies of a signal)
 * while the group is alive. Returns the function that forgets it. The exit
 * hook is installed while at least one group is registered, so an idle
 * library leaves no listener on `process`.
 */
export function killGroupOnExit(pid: number): () => void {
  live.add(pid);
  removeHook ??= onExit(() => {
    for (const group of live) signalTree(group, 'SIGKILL');
  });
  return () => {
    live.delete(pid);
    if (live.size === 0 && removeHook) {
      removeHook();
      removeHook = undefined;
    }
  };
}
