// A TcpProxy in a process of its own, so that its timers do not share an
// event loop with the client being measured; prints its address, then runs
// until it is killed.
//
//   node --import tsx test/support/proxyProcess.ts <target host:port> <delayMs>
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { natsUrl } from './natsServer.js';
import { TcpProxy } from './tcpProxy.js';

/** A proxy process to `target` holding each chunk `delayMs` each way, and its address once it listens. */
export async function startProxyProcess(
  target: string,
  delayMs: number,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), target, String(delayMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`the proxy process exited with ${String(code)}`)));
  });
  return { url, child };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [target = natsUrl(), delayMs = '0'] = process.argv.slice(2);
  const proxy = await TcpProxy.start(target, { delayMs: Number(delayMs) });
  console.log(proxy.url);
}
