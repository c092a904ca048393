// What a request line asks for, read without trusting it: `new URL()` throws
// on targets a client may send (`http://[`, a port past 65535) and takes a
// path such as `//evil/runs` for another host, so the two forms HTTP/1.1
// defines are read here, and anything else is refused.
import type { IncomingMessage } from 'node:http';

/** A request target read: its path (still percent-encoded), its query, and the authority an absolute form names. */
export interface RequestTarget {
  /** The path, still percent-encoded (`/runs/abc/events`). */
  readonly path: string;
  /** The query's parameters (`after`, `token`). */
  readonly query: URLSearchParams;
  /** `host[:port]` of an absolute-form target (`GET http://host/runs`), which stands for the `Host` header. */
  readonly authority: string | undefined;
}

/** `scheme://` at the start of an absolute-form target. */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The target of `req`, or `undefined` for one that is neither a path
 * (origin form, `/runs?after=3`) nor an `http:` or `https:` URL (absolute
 * form, which RFC 9112 says a server must take): `*`, `http://[`, a URL
 * with a bad port or a `user@`. Never throws.
 */
export function requestTarget(req: IncomingMessage): RequestTarget | undefined {
  const raw = typeof req.url === 'string' ? req.url : '';
  if (raw.startsWith('/')) {
    const at = raw.indexOf('?');
    const path = at === -1 ? raw : raw.slice(0, at);
    return { path, query: new URLSearchParams(at === -1 ? '' : raw.slice(at + 1)), authority: undefined };
  }
  if (!ABSOLUTE.test(raw) || !URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // RFC 9110 4.2.4: a `user@` in an http URL is treated as an error; it is how a URL passes for another host's.
  if (url.host === '' || url.username !== '' || url.password !== '') return undefined;
  return { path: url.pathname, query: url.searchParams, authority: url.host };
}
