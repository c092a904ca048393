#!/usr/bin/env node
// The lifeline of one CLI process group: it holds the read end of a pipe
// from the app. The app writes "release" when the run ended on its own; an
// end of the pipe without it means the app died (even by SIGKILL, which runs
// no exit hook), and the group is stopped as the app would have: each signal
// in turn, `graceMs` apart, while the group is still there.
//
//   node lifeline.mjs <process group id> <graceMs> <SIGINT,SIGTERM,SIGKILL>
const [group, grace, list] = process.argv.slice(2);
const pgid = Number(group);
const graceMs = Number(grace);
const signals = (list ?? 'SIGKILL').split(',');

const alive = () => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let released = false;
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (input.includes('release')) released = true;
});
process.stdin.on('error', () => {});
process.stdin.on('close', async () => {
  if (released) process.exit(0);
  for (const signal of signals) {
    if (!alive()) break;
    try {
      process.kill(-pgid, signal);
    } catch {
      break;
    }
    for (let waited = 0; waited < graceMs && alive(); waited += 50) await sleep(50);
  }
  process.exit(0);
});
// A group that ended while the app still holds the pipe needs no lifeline.
setInterval(() => {
  if (!alive()) process.exit(0);
}, 1000);
