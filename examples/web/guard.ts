// Who may talk to the dashboard. A run is code executed on this machine, so
// the server answers only requests addressed to it by a name it knows (which
// defeats DNS rebinding), coming from its own page when a browser says where
// they come from, and, when it listens beyond loopback, carrying its token.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { HttpError } from './http.js';

export interface GuardOptions {
  /** The address the server is bound to, as `server.address()` gives it. */
  readonly address: string;
  readonly port: number;
  /** More names the server answers to in `Host`, e.g. `dash.example.org`. */
  readonly allowHosts?: readonly string[] | undefined;
  /**
   * The token a request must carry. Default: none on loopback, a random one
   * beyond. At least 16 letters, digits, `-` or `_`.
   */
  readonly token?: string | undefined;
}

/** `host[:port]` as `Host` and `Origin` carry it; a name with anything else in it (`user@`, a path) is not one. */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/;
const TOKEN = /^[\w-]{16,}$/;
const WILDCARDS = new Set(['0.0.0.0', '::']);

export function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^(::ffff:)?127\./.test(address);
}

function authority(text: string): { name: string; port: number } | undefined {
  const match = AUTHORITY.exec(text.toLowerCase());
  if (!match) return undefined;
  return { name: match[1]!.replace(/^\[(.*)\]$/, '$1'), port: match[2] === undefined ? 80 : Number(match[2]) };
}

/** The names a server bound to `address` answers to: a wildcard stands for each of this machine's own. */
function ownNames(address: string, extra: readonly string[]): Set<string> {
  const names = new Set(['localhost', address, ...extra].map((n) => n.toLowerCase().replace(/^\[(.*)\]$/, '$1')));
  if (WILDCARDS.has(address)) {
    names.add(hostname().toLowerCase());
    for (const nets of Object.values(networkInterfaces())) for (const net of nets ?? []) names.add(net.address);
  }
  return names;
}

/** The check every request to the dashboard passes first. */
export class RequestGuard {
  /** The token requests must carry, or `undefined` when none is asked for. */
  readonly token: string | undefined;
  private readonly names: ReadonlySet<string>;
  /** Per port: two dashboards on one host keep apart. */
  private readonly cookieName: string;

  constructor(private readonly options: GuardOptions) {
    if (options.token !== undefined && !TOKEN.test(options.token))
      throw new Error('the token must be at least 16 letters, digits, - or _');
    for (const name of options.allowHosts ?? [])
      if (!authority(name) || /:\d+$/.test(name)) throw new Error(`${JSON.stringify(name)} is not a host name`);
    this.token = options.token ?? (isLoopback(options.address) ? undefined : randomBytes(24).toString('hex'));
    this.names = ownNames(options.address, options.allowHosts ?? []);
    this.cookieName = `evosci-rx-token-${options.port}`;
  }

  /**
   * Throws an `HttpError` for a request this server does not take. Returns the
   * `Set-Cookie` to answer with when the token came in the URL (the link the
   * server printed), so that the page's own requests carry it from then on.
   */
  check(req: IncomingMessage, url: URL): string | undefined {
    const host = authority(req.headers.host ?? '');
    if (!host || !this.names.has(host.name) || host.port !== this.options.port)
      throw new HttpError(403, `this dashboard does not answer to Host ${JSON.stringify(req.headers.host ?? '')}`);
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const from = origin.startsWith('http://') ? authority(origin.slice('http://'.length)) : undefined;
      if (!from || from.name !== host.name || from.port !== host.port)
        throw new HttpError(
          403,
          `requests from ${JSON.stringify(origin)} are not taken: only the dashboard's own page`,
        );
    }
    if (this.token === undefined) return undefined;
    const inUrl = url.searchParams.get('token');
    if (inUrl !== null && this.matches(inUrl))
      return `${this.cookieName}=${this.token}; Path=/; HttpOnly; SameSite=Strict`;
    if (this.matches(this.presented(req))) return undefined;
    throw new HttpError(401, 'this dashboard needs its token: open the link with ?token= that it printed');
  }

  private presented(req: IncomingMessage): string | undefined {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (bearer) return bearer[1];
    for (const pair of (req.headers.cookie ?? '').split(';')) {
      const [name, value] = pair.trim().split('=', 2);
      if (name === this.cookieName) return value;
    }
    return undefined;
  }

  private matches(given: string | undefined): boolean {
    if (given === undefined || this.token === undefined) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
