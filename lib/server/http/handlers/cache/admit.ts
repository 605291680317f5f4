/**
 * A new answer from upstream: whether it is stored (RFC 9111 §3, the refusals named with
 * Souin's details), its freshness lifetime, the entry made of it, and its body stored while
 * it streams to the client — up to the largest body stored, past which what was kept is let
 * go and the answer goes on unstored.
 *
 * @module
 */
import type { Logger } from "../../../module/instance.ts";
import type { Directives } from "./cache_control.ts";
import {
  applyDirectives,
  type Entry,
  HEURISTIC_STATUSES,
  initialAge,
  storability,
  storedFields,
} from "./entry.ts";
import { httpDate } from "./http_date.ts";
import { methodInKey, type View } from "./request.ts";
import type { Settings } from "./settings.ts";
import { appendStatus, statusMember, type StatusParams } from "./status.ts";
import { type CacheStore, entrySize, varyValue } from "./store.ts";

/**
 * When an entry may be dropped: a lifetime (at least `ttl`) after it went stale, so that it
 * can be revalidated and serve `max-stale` and `stale-if-error` requests, or longer when
 * `stale`, `stale-while-revalidate` or `stale-if-error` say so.
 */
export function keepUntil(s: Settings, e: Entry): number {
  const extra = Math.max(s.staleMs, e.swr, e.sie, e.lifetime, s.ttlMs);
  return e.responseTime - e.initialAge + e.lifetime + extra;
}

/**
 * Why an answer is not stored (a Souin detail), or null when it is: its status, headers,
 * Cache-Control directives and the header fields the rule drops.
 */
function refusal(
  s: Settings,
  v: View,
  { status, headers: h, cc, dropped }: {
    status: number;
    headers: Headers;
    cc: Directives;
    dropped: Set<string>;
  },
): string | null {
  if (status < 200 || status === 206 || status === 304) return "UNCACHEABLE-STATUS-CODE";
  // an answer without a body under a key a GET shares would answer the GET
  if (v.method === "HEAD" && !methodInKey(v.rule)) return "HEAD-REQUEST";
  if (v.reqCC.has("no-store")) return "NO-STORE-DIRECTIVE";
  if (!s.ignoreResponse) {
    if (cc.has("no-store") && !(cc.has("must-understand") && HEURISTIC_STATUSES.has(status))) {
      return "NO-STORE-DIRECTIVE";
    }
    if (cc.get("private") === true || cc.get("private") === "") {
      return "PRIVATE-OR-AUTHENTICATED-RESPONSE";
    }
  }
  const vary = (h.get("vary") ?? "").toLowerCase().split(",").map((x) => x.trim());
  if (v.rule.vary && vary.includes("*")) return "UPSTREAM-VARY-STAR";
  // RFC 9111 §3.5: an authenticated request's answer only when it says it may be shared,
  // or when the key (or Vary) tells the credentials apart
  if (
    v.c.headers.has("authorization") && !cc.has("public") && !cc.has("s-maxage") &&
    !cc.has("must-revalidate") && !s.keyedFields.has("authorization") &&
    !vary.includes("authorization")
  ) return "PRIVATE-OR-AUTHENTICATED-RESPONSE";
  if (
    (h.has("set-cookie") || v.c.respHeaders?.has("set-cookie")) && !dropped.has("set-cookie")
  ) return "SET-COOKIE";
  const length = h.get("content-length");
  if (length !== null && Number(length) > s.maxBody) return "UPSTREAM-RESPONSE-TOO-LARGE";
  return null;
}

/** What an admission needs beside the answer. */
export interface Admission {
  s: Settings;
  store: CacheStore;
  log: Logger;
  v: View;
  requestTime: number;
  responseTime: number;
  /** The storage's generation when the request went up (a purge since: not stored). */
  generation: number;
  /** Called once: with the stored entry, or null when nothing was stored. */
  done(e: Entry | null): void;
  /** What `Cache-Status` says of the forward. */
  fwd: StatusParams;
}

/** Decides whether a new answer is stored; stores it as it streams to the client. */
export function admit(a: Admission, res: Response): Response {
  const { s, v, store, done } = a;
  const c = v.c;
  const h = new Headers(res.headers);
  if (s.defaultCacheControl !== null && !h.has("cache-control")) {
    h.set("cache-control", s.defaultCacheControl);
  }
  if (!h.has("date")) h.set("date", httpDate(a.responseTime));
  const { cc, explicit, dropped } = storability(h, a.responseTime);
  let reason = refusal(s, v, { status: res.status, headers: h, cc, dropped });
  let lifetime = 0;
  if (reason === null) {
    const defaulted = HEURISTIC_STATUSES.has(res.status) || s.extraStatuses.has(res.status) ||
      cc.has("public");
    const l = s.ignoreResponse ? s.ttlMs : explicit ?? (defaulted ? s.ttlMs : null);
    if (l === null) reason = "UNCACHEABLE-STATUS-CODE";
    else lifetime = l;
  }
  const answer = (body: ReadableStream<Uint8Array> | null, p: StatusParams) => {
    h.set("cache-status", appendStatus(h.get("cache-status"), statusMember(s.name, p)));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: h });
  };
  if (reason !== null) {
    done(null);
    return answer(res.body, { ...a.fwd, key: v.shown, detail: reason });
  }
  // the fields set by earlier handlers that this answer does not have go with it
  const fields = storedFields(h, dropped).filter(([k]) => k !== "cache-status");
  const upstreamStatus = h.get("cache-status");
  if (upstreamStatus !== null) fields.push(["cache-status", upstreamStatus]);
  if (c.respHeaders !== null) {
    for (const [k, val] of c.respHeaders) {
      if (k !== "set-cookie" && !h.has(k) && !dropped.has(k)) fields.push([k, val]);
    }
  }
  const varyNames = v.rule.vary
    ? (h.get("vary") ?? "").toLowerCase().split(",").map((x) => x.trim()).filter((x) => x)
    : [];
  const e: Entry = {
    key: v.key,
    url: `${c.scheme}://${c.host}${c.uri}`,
    method: v.method,
    status: res.status,
    headers: fields,
    vary: varyNames,
    varyValues: varyNames.map((n) => varyValue(c.headers, n)),
    requestTime: a.requestTime,
    responseTime: a.responseTime,
    initialAge: initialAge(h, a.requestTime, a.responseTime),
    lifetime,
    swr: 0,
    sie: 0,
    noCache: false,
    mustRevalidate: false,
    etag: h.get("etag"),
    lastModified: h.get("last-modified"),
    body: { kind: "memory", bytes: new Uint8Array(0) },
    size: 0,
    keepUntil: 0,
  };
  if (!s.ignoreResponse) applyDirectives(e, cc);
  e.keepUntil = keepUntil(s, e);
  const sink = store.sink();
  let abandoned = false;
  const abandon = () => {
    if (abandoned) return;
    abandoned = true;
    sink.abort();
    done(null);
  };
  const commit = async () => {
    try {
      const body = await sink.finish();
      if (store.generation !== a.generation) {
        store.discard(body);
        done(null);
        return;
      }
      e.body = body;
      e.size = entrySize(e, sink.size);
      done(store.put(e) ? e : null);
    } catch (err) {
      a.log.error("storing a cached answer failed", { key: v.key, error: String(err) });
      done(null);
    }
  };
  // `stored` when it is known now (a length within the limit, or no body); a body of
  // unknown length is stored if it ends within the limit
  const known = res.body === null || v.method === "HEAD" || h.has("content-length");
  const status: StatusParams = { ...a.fwd, stored: known, key: v.shown };
  if (res.body === null || v.method === "HEAD") {
    res.body?.cancel();
    commit();
    return answer(null, status);
  }
  const reader = res.body.getReader();
  const max = s.maxBody;
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (err) {
        abandon();
        ctl.error(err);
        return;
      }
      if (r.done) {
        ctl.close();
        if (!abandoned) await commit();
        return;
      }
      if (!abandoned) {
        if (sink.size + r.value.length > max) abandon();
        else await sink.write(r.value);
      }
      ctl.enqueue(r.value);
    },
    cancel(why) {
      abandon();
      return reader.cancel(why);
    },
  }, { highWaterMark: 0 });
  return answer(body, status);
}
