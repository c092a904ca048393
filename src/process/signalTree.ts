/** Sends `signal` to the process group led by `pid`, or to `pid` alone where groups do not exist. */
export function signalTree(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}
