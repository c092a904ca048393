// Who may talk to a runs handler. A run is code executed on the server, so
// the handler answers only requests addressed to it by a name it knows
// (which defeats DNS rebinding), coming from its own pages when a browser
// says where they come from, and carrying its token where one is needed.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { RunHubError } from '../errors.js';
import { requestTarget } from './requestTarget.js';

/** Options of the checks every request passes first. */
export interface GuardOptions {
  /**
   * More names the server answers to in `Host`, e.g. `runs.example.org` (a
   * reverse proxy's). A name without a port matches any port. Default: only
   * loopback names and the server's own addresses, at the port it listens on.
   */
  readonly allowHosts?: readonly string[] | undefined;
  /** Origins whose pages may call it, e.g. `https://app.example.org`. Default: only its own. */
  readonly allowOrigins?: readonly string[] | undefined;
  /**
   * The token every request carries (`Authorization: Bearer …`, or the
   * cookie set by a link with `?token=`): at least 16 letters, digits, `-`
   * or `_`. Without it, requests are taken over loopback only. `false`: the
   * app authenticates before this handler (its own middleware), and every
   * connection is taken.
   */
  readonly token?: string | false | undefined;
}

/** `host[:port]` as `Host` and `Origin` carry it; a name with anything else in it (`user@`, a path) is not one. */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/;
const TOKEN = /^[\w-]{16,}$/;
/** The token's cookie, per port: two servers on one host keep theirs apart. */
const cookieName = (port: number | undefined) => `evosci-rx-token-${port ?? 0}`;

export function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^(::ffff:)?127\./.test(address);
}

function authority(text: string): { name: string; port: number | undefined } | undefined {
  const match = AUTHORITY.exec(text.toLowerCase());
  if (!match) return undefined;
  return { name: match[1]!.replace(/^\[(.*)\]$/, '$1'), port: match[2] === undefined ? undefined : Number(match[2]) };
}

/** A client's text in a message: quoted, and cut short (a header may be as long as a server lets it be). */
const quoted = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

/**
 * The authority a request names: an absolute-form target's (RFC 9112: it
 * stands for `Host`), else its one `Host` header; two are refused, since a
 * proxy and this server could each read another.
 */
function hostOf(req: IncomingMessage): string {
  const target = requestTarget(req);
  if (target?.authority !== undefined) return target.authority;
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) throw new RunHubError('a request carries one Host header, not more', 400);
  return req.headers.host ?? '';
}

/** This machine's own names and addresses: what a server bound beyond loopback is addressed by. */
function machineNames(): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '::1', hostname().toLowerCase()]);
  for (const nets of Object.values(networkInterfaces())) for (const net of nets ?? []) names.add(net.address);
  return names;
}

/** The check every request to a runs handler passes first; a refusal is a `RunHubError` with its status. */
export class RequestGuard {
  private readonly token: string | false | undefined;
  private readonly names = machineNames();
  private readonly hosts: readonly { name: string; port: number | undefined }[];
  private readonly origins: ReadonlySet<string>;

  constructor(options: GuardOptions = {}) {
    if (typeof options.token === 'string' && !TOKEN.test(options.token))
      throw new TypeError('the token must be at least 16 letters, digits, - or _');
    this.token = options.token;
    this.hosts = (options.allowHosts ?? []).map((name) => {
      const parsed = authority(name);
      if (!parsed) throw new TypeError(`${JSON.stringify(name)} is not a host name`);
      return parsed;
    });
    this.origins = new Set((options.allowOrigins ?? []).map((o) => o.toLowerCase().replace(/\/$/, '')));
  }

  /**
   * Throws a `RunHubError` (403, 401; 400 for two `Host` headers) for a
   * request this handler does not take. Returns the `Set-Cookie` to answer
   * with when the token came in the URL (`url.searchParams`), so that a
   * page's own requests carry it from then on.
   */
  check(req: IncomingMessage, url: Pick<URL, 'searchParams'>): string | undefined {
    const given = hostOf(req);
    const host = authority(given);
    if (!host) throw new RunHubError(`this server does not answer to Host ${quoted(given)}: not a host name`, 403);
    if (!this.knownHost(host, req.socket.localPort))
      throw new RunHubError(`this server does not answer to Host ${quoted(given)}: add it to allowHosts`, 403);
    const origin = req.headers.origin;
    if (origin !== undefined && !this.knownOrigin(origin.toLowerCase(), given.toLowerCase()))
      throw new RunHubError(`requests from ${quoted(origin)} are not taken`, 403);
    if (this.token === false) return undefined;
    if (this.token === undefined) {
      if (isLoopback(req.socket.localAddress ?? '')) return undefined;
      throw new RunHubError('this server takes requests beyond loopback only with a token', 401);
    }
    const cookie = cookieName(req.socket.localPort);
    const inUrl = url.searchParams.get('token');
    if (inUrl !== null && this.matches(inUrl)) return `${cookie}=${this.token}; Path=/; HttpOnly; SameSite=Strict`;
    if (this.matches(this.presented(req, cookie))) return undefined;
    throw new RunHubError('this server needs its token: Authorization: Bearer <token>', 401);
  }

  private knownHost(host: { name: string; port: number | undefined }, localPort: number | undefined): boolean {
    if (this.hosts.some((h) => h.name === host.name && (h.port === undefined || h.port === (host.port ?? 80))))
      return true;
    return this.names.has(host.name) && (host.port ?? 80) === localPort;
  }

  private knownOrigin(origin: string, host: string): boolean {
    return this.origins.has(origin) || origin === `http://${host}` || origin === `https://${host}`;
  }

  private presented(req: IncomingMessage, cookie: string): string | undefined {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (bearer) return bearer[1];
    for (const pair of (req.headers.cookie ?? '').split(';')) {
      const [name, value] = pair.trim().split('=', 2);
      if (name === cookie) return value;
    }
    return undefined;
  }

  private matches(given: string | undefined): boolean {
    if (given === undefined || typeof this.token !== 'string') return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
