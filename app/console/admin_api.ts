/**
 * A small client of a Gatehouse server's admin API (the same REST API `curl` and the
 * `gatehouse` command use): the live config with its `Etag`, changes with `If-Match`,
 * `/adapt`, `/load`, `/reverse_proxy/upstreams` and `/pki/ca/<id>`.
 *
 * The address is `GATEHOUSE_ADMIN` as the command line reads it (`localhost:2019`,
 * `127.0.0.1:2019`) or a URL (`http://10.0.0.5:2019`). Every request names that address as
 * its `Origin`, as the command line does, so endpoints with `enforce_origin` accept it.
 * Unix-socket addresses are refused at start (the console reaches servers over TCP).
 *
 * @module
 */

/** How long a request to the admin API may take: 10 seconds. */
export const ADMIN_TIMEOUT_MS = 10_000;
/** How long a `/load` may take (the server provisions the whole config first): 60 seconds. */
export const LOAD_TIMEOUT_MS = 60_000;

/** A duration in words: `10 seconds`, `1 second`, `250 milliseconds`. */
function inWords(ms: number): string {
  if (ms % 1000 !== 0) return `${ms} milliseconds`;
  return ms === 1000 ? "1 second" : `${ms / 1000} seconds`;
}

/** One answer of the admin API, read whole. */
export interface AdminAnswer {
  /** HTTP status (0 when the endpoint could not be reached). */
  status: number;
  /** The parsed JSON body (undefined when empty or not JSON). */
  json: unknown;
  /** The raw body. */
  text: string;
  /** The `Etag` header, or null. */
  etag: string | null;
  /** What went wrong, in words (null on success). */
  error: string | null;
}

/** An upstream of `/reverse_proxy/upstreams`. */
export interface Upstream {
  /** Dial address. */
  address: string;
  /** Requests in flight. */
  num_requests: number;
  /** Failures remembered by passive health checks. */
  fails: number;
}

/** Thrown at start for an admin address the console cannot use. */
export class AdminAddressError extends Error {
  /** Stable code. */
  readonly code = "invalid_admin_address";
  constructor(message: string) {
    super(message);
    this.name = "AdminAddressError";
  }
}

/** The admin endpoint's base URL for an address as `GATEHOUSE_ADMIN` gives it. */
export function adminBaseUrl(address: string): string {
  const raw = address.trim();
  if (raw.startsWith("unix/") || raw.startsWith("unix+h2c/")) {
    throw new AdminAddressError(
      `GATEHOUSE_ADMIN=${raw}: the console reaches admin endpoints over TCP; give host:port`,
    );
  }
  const url = /^https?:\/\//.test(raw) ? raw : `http://${raw}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AdminAddressError(
      `GATEHOUSE_ADMIN=${raw} is not an address: give host:port, e.g. localhost:2019`,
    );
  }
  if (
    parsed.pathname !== "/" || parsed.search || parsed.hash ||
    !parsed.port && !/^https?:\/\//.test(raw)
  ) {
    throw new AdminAddressError(
      `GATEHOUSE_ADMIN=${raw} is not an address: give host:port, e.g. localhost:2019`,
    );
  }
  return parsed.origin;
}

/** The client. */
export class AdminApi {
  /** The endpoint's origin, e.g. `http://localhost:2019`. */
  readonly base: string;
  #fetch: typeof fetch;

  /** A client of the endpoint at `address`; `fetchImpl` for tests. */
  constructor(address: string, fetchImpl?: typeof fetch) {
    this.base = adminBaseUrl(address);
    this.#fetch = fetchImpl ?? ((input, init) => fetch(input, init));
  }

  /** Sends one request and reads the answer; never throws. */
  async call(
    method: string,
    path: string,
    init: { body?: string; type?: string; ifMatch?: string; timeoutMs?: number } = {},
  ): Promise<AdminAnswer> {
    const headers: Record<string, string> = { origin: this.base };
    if (init.body !== undefined) headers["content-type"] = init.type ?? "application/json";
    if (init.ifMatch) headers["if-match"] = init.ifMatch;
    const timeoutMs = init.timeoutMs ?? ADMIN_TIMEOUT_MS;
    let res: Response;
    try {
      res = await this.#fetch(this.base + path, {
        method,
        headers,
        body: init.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const why = e instanceof DOMException && e.name === "TimeoutError"
        ? `it did not answer within ${inWords(timeoutMs)}`
        : "nothing answered there";
      return {
        status: 0,
        json: undefined,
        text: "",
        etag: null,
        error: `Could not reach the server's admin endpoint at ${this.base}: ${why}. Check that ` +
          "the server runs and that GATEHOUSE_ADMIN names its admin address.",
      };
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text.trim() ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const said = (json as { error?: unknown } | undefined)?.error;
    return {
      status: res.status,
      json,
      text,
      etag: res.headers.get("etag"),
      error: res.ok
        ? null
        : `The server answered ${res.status}: ${
          typeof said === "string" && said ? said : text.trim().slice(0, 300) || res.statusText
        }`,
    };
  }

  /** The config at `path` (`""` for the whole config) with its Etag. */
  getConfig(path: string): Promise<AdminAnswer> {
    return this.call("GET", `/config/${path}`);
  }

  /**
   * Replaces the value at `path` only if it still has the Etag `ifMatch` (412 otherwise). An
   * empty `ifMatch` is refused here, without a request: a change without `If-Match` could
   * overwrite one made meanwhile.
   */
  patchConfig(path: string, value: string, ifMatch: string): Promise<AdminAnswer> {
    if (!ifMatch.trim()) {
      return Promise.resolve({
        status: 0,
        json: undefined,
        text: "",
        etag: null,
        error: "No version (Etag) of the node was given, so nothing was sent: a change " +
          "without If-Match could overwrite one made meanwhile.",
      });
    }
    return this.call("PATCH", `/config/${path}`, { body: value, ifMatch });
  }

  /** Adapts a config (`type`: `text/caddyfile`, `application/json`, ...) without loading it. */
  adapt(body: string, type: string): Promise<AdminAnswer> {
    return this.call("POST", "/adapt", { body, type });
  }

  /** Loads a whole config (JSON); waits up to {@linkcode LOAD_TIMEOUT_MS}. */
  load(body: string): Promise<AdminAnswer> {
    return this.call("POST", "/load", { body, timeoutMs: LOAD_TIMEOUT_MS });
  }

  /** The reverse proxy's upstreams. */
  upstreams(): Promise<AdminAnswer> {
    return this.call("GET", "/reverse_proxy/upstreams");
  }

  /** A CA's information (default `local`). */
  ca(id = "local"): Promise<AdminAnswer> {
    return this.call("GET", `/pki/ca/${encodeURIComponent(id)}`);
  }
}
