/**
 * One webhook POST, connected to an address that was checked. The request goes through
 * `node:http` / `node:https` (in Deno and in Node alike) with a `lookup` that answers the
 * connection's name lookup with the addresses `WebhookTargets` resolved and checked, so the
 * socket goes to exactly those: the `Host` header, TLS server name (SNI) and certificate check
 * stay the URL's name. `fetch` cannot do this: it resolves the name again itself, and Deno's
 * `createHttpClient` `proxy: {transport: "tcp"}` sends absolute-form requests and wraps https
 * in a proxy tunnel rather than TLS to the given address. Redirects are never followed (node's
 * client does not follow them): a 3xx answer is returned as it is.
 *
 * The connection is made anew for each attempt and closed after the answer's head; the body
 * of the answer is not read. `HTTP_PROXY`/`HTTPS_PROXY` are not used.
 *
 * `attemptOnce` is one delivery attempt as the dispatcher logs it: the target checked (after
 * resolution), the POST, and its outcome in words.
 *
 * @module
 */
import {
  type CheckedAddress,
  WebhookTargetRefused,
  type WebhookTargets,
} from "./webhook_targets.ts";

/** The head of the receiver's answer. */
export interface PostAnswer {
  /** HTTP status. */
  status: number;
  /** Its `Location` header, if any. */
  location: string | null;
}

type LookupCallback = (
  err: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * POSTs `body` to `url`, connecting only to `addresses` (checked beforehand). Rejects on a
 * network or TLS error, and when `signal` aborts.
 *
 * @example
 * ```ts ignore
 * import { postTo } from "./webhook_post.ts";
 * const answer = await postTo(new URL("https://hooks.example/in"), "{}", {}, [
 *   { address: "93.184.215.14", family: 4 },
 * ], AbortSignal.timeout(10_000));
 * ```
 */
export async function postTo(
  url: URL,
  body: string,
  headers: Record<string, string>,
  addresses: readonly CheckedAddress[],
  signal: AbortSignal,
): Promise<PostAnswer> {
  const https = url.protocol === "https:";
  const mod = https ? (await import("node:https")).default : (await import("node:http")).default;
  const bytes = new TextEncoder().encode(body);
  const lookup = (_name: string, options: { all?: boolean }, cb: LookupCallback) => {
    if (options?.all) cb(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else cb(null, addresses[0].address, addresses[0].family);
  };
  // an address in the URL is connected to as it is; a name through the lookup above
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return await new Promise<PostAnswer>((resolve, reject) => {
    const req = mod.request({
      protocol: url.protocol,
      host,
      port: url.port || (https ? 443 : 80),
      path: url.pathname + url.search,
      method: "POST",
      headers: { ...headers, host: url.host, "content-length": String(bytes.byteLength) },
      agent: false,
      lookup: lookup as never,
      signal,
      ...(https ? { servername: /^[\d.]+$|:/.test(host) ? undefined : host } : {}),
    }, (res) => {
      const location = res.headers.location;
      resolve({
        status: res.statusCode ?? 0,
        location: typeof location === "string" ? location : null,
      });
      res.destroy();
    });
    req.on("error", reject);
    req.end(bytes);
  });
}

/** `p`, or a rejection as soon as `signal` aborts (a resolver cannot be stopped otherwise). */
function beforeAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** What one attempt did, as the delivery log keeps it. */
export interface AttemptOutcome {
  /** The receiver's HTTP status, or null when no answer came. */
  status: number | null;
  /** Why it failed, in words, or null when the receiver answered 2xx. */
  error: string | null;
  /** The target was refused: the delivery fails without another attempt. */
  refused: boolean;
}

/** One attempt: the target checked at `targets`, then the POST (or the given `fetch`). */
export async function attemptOnce(o: {
  url: string;
  body: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  targets: WebhookTargets;
  fetch: typeof fetch | null;
}): Promise<AttemptOutcome> {
  try {
    const url = new URL(o.url);
    // checked now, after resolution: the connection goes to these addresses only
    const addresses = await beforeAbort(o.targets.addresses(url), o.signal);
    let answer: PostAnswer;
    if (o.fetch) {
      const init = { method: "POST", body: o.body, signal: o.signal, headers: o.headers };
      const res = await o.fetch(url.href, { ...init, redirect: "manual" });
      answer = { status: res.status, location: res.headers.get("location") };
      await res.body?.cancel();
    } else {
      answer = await postTo(url, o.body, o.headers, addresses, o.signal);
    }
    const { status, location } = answer;
    if (status >= 300 && status < 400) {
      const where = location ? ` (Location: ${location.slice(0, 500)})` : "";
      return {
        status,
        error: `HTTP ${status}: redirects are not followed${where}`,
        refused: false,
      };
    }
    return {
      status,
      error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
      refused: false,
    };
  } catch (err) {
    const refused = err instanceof WebhookTargetRefused;
    const error = o.signal.aborted && !refused
      ? "timeout or shutdown"
      : String((err as Error).message);
    return { status: null, error, refused };
  }
}
