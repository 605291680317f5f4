/**
 * The `cache` handler: an RFC 9111 shared cache in front of the rest of the route.
 *
 * - A request whose method is not cached goes on (`fwd=method`); a non-error answer to an
 *   unsafe one (POST, PUT, DELETE...) drops what is stored for its URI (§4.4). WebSocket and
 *   event-stream requests and URIs matching `regex.exclude` go on (`fwd=bypass`).
 * - A stored answer fresh enough for the request (§4.2, `max-age`, `min-fresh`) is a hit;
 *   conditional requests get `304` from it (RFC 9110 §13), a single `Range` of a body in
 *   memory `206`, `HEAD` the stored `GET`'s fields.
 * - A stale one is served when the request's `max-stale` allows (not after
 *   `must-revalidate`), or within its `stale-while-revalidate` while one background request
 *   revalidates it (RFC 5861); otherwise it is revalidated with its `ETag`/`Last-Modified`: a
 *   `304` refreshes it (§4.3.4), an error or a 5xx gets it served stale within its or the
 *   request's `stale-if-error`, or the configured `stale`.
 * - On a miss one request per key goes upstream and the others wait for its answer
 *   (coalescing); the answer streams to its client while it is stored, up to the largest
 *   body stored, past which it goes on unstored.
 *
 * Every answer carries a `Cache-Status` member (RFC 9211, status.ts).
 *
 * @module
 */
import type { Logger } from "../../../module/instance.ts";
import type { ProvisionContext } from "../../../module/mod.ts";
import { RequestContext } from "../../context.ts";
import { responseError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { planRange } from "../file_server/range.ts";
import type { CacheApp } from "./app.ts";
import { deltaSeconds, type Directives, parseCacheControl } from "./cache_control.ts";
import type { CacheConfig } from "./config.ts";
import {
  applyDirectives,
  currentAge,
  type Entry,
  freshnessLeft,
  HEURISTIC_STATUSES,
  initialAge,
  storability,
  storedFields,
  updateFrom304,
} from "./entry.ts";
import { httpDate, parseHttpDate } from "./http_date.ts";
import { hashBytes, type KeyRule } from "./key.ts";
import { MAX_KEY_BODY, type Settings, settle } from "./settings.ts";
import { appendStatus, statusMember, type StatusParams } from "./status.ts";
import { type CacheStore, entrySize, MemoryStore, variantMatches, varyValue } from "./store.ts";
import { acquireStore, releaseStore } from "./stores.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
/** Answers that count as the upstream failing (stale-if-error), never stored. */
const FAILURES = new Set([500, 502, 503, 504]);
const NONE: Directives = new Map();
/** Answers kept ready to clone (one per recently hit entry, see `#hit`). */
const MEMOS = 1024;
/** Fields a `304` made from a stored answer leaves out (RFC 9110 §15.4.5). */
const NOT_IN_304 = new Set(["content-length", "content-type", "content-encoding", "content-range"]);

/** One request's view of the cache. */
interface View {
  c: RequestContext;
  rule: KeyRule;
  key: string;
  /** The key as `Cache-Status` shows it (undefined with `key.hide`). */
  shown: string | undefined;
  method: string;
  reqCC: Directives;
  /** The client's own validators and range, read before any are changed. */
  inm: string | null;
  ims: string | null;
  range: string | null;
  ifRange: string | null;
}

/** A request on its way upstream that others with the same key wait for. */
interface Flight {
  done: Promise<Entry | null>;
  settle(e: Entry | null): void;
}

function flight(): Flight {
  let settle!: (e: Entry | null) => void;
  const done = new Promise<Entry | null>((r) => settle = r);
  return { done, settle };
}

const secs = (ms: number) => Math.floor(ms / 1000);
/** True when the key tells methods apart (a template may not). */
const methodInKey = (r: KeyRule) => r.method && r.template === null;
const requestDirectives = (v: string | null) => v === null ? NONE : parseCacheControl(v);

function opaque(tag: string): string {
  return tag.startsWith("W/") ? tag.slice(2) : tag;
}

/** If-None-Match's weak comparison (RFC 9110 §13.1.2). */
function noneMatch(header: string, etag: string | null): boolean {
  if (header.trim() === "*") return true;
  if (etag === null) return false;
  const want = opaque(etag);
  return header.split(",").some((t) => opaque(t.trim()) === want);
}

/** A detached copy of a request, for a revalidation its client does not wait for. */
function detached(c: RequestContext, method: string): RequestContext {
  const req = new Request(`${c.scheme}://${c.host}${c.uri}`, { method, headers: c.headers });
  const { completed: _c, upgrade: _u, push: _p, ...info } = c.info;
  const d = new RequestContext(req, info, c.server);
  d.settleHost();
  if (c.vars) d.vars = new Map(c.vars);
  if (c.extra) d.extra = new Map(c.extra);
  return d;
}

/** Reads a request body of up to `max` bytes (null when larger), and puts it back. */
async function takeBody(c: RequestContext, max: number): Promise<Uint8Array | null> {
  const body = c.requestBody();
  if (body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > max) {
      // the rest goes upstream as it comes, after what was read
      const rest = new ReadableStream<Uint8Array>({
        start(ctl) {
          for (const ch of chunks) ctl.enqueue(ch);
        },
        async pull(ctl) {
          const r = await reader.read();
          if (r.done) ctl.close();
          else ctl.enqueue(r.value);
        },
        cancel: (why) => reader.cancel(why),
      });
      c.setRequestBody(rest);
      return null;
    }
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    all.set(ch, at);
    at += ch.length;
  }
  c.setRequestBody(
    size === 0 ? null : new ReadableStream({
      start(ctl) {
        ctl.enqueue(all);
        ctl.close();
      },
    }),
  );
  return all;
}

/** A provisioned `cache` handler (see the module documentation). */
export class Cache implements HttpHandler {
  readonly #s: Settings;
  readonly #store: CacheStore;
  readonly #pooled: boolean;
  readonly #log: Logger;
  readonly #flights = new Map<string, Flight>();
  /** The last answer built from each of the most recently hit entries. */
  readonly #memos = new Map<Entry, { age: number; status: string; res: Response }>();

  private constructor(s: Settings, store: CacheStore, pooled: boolean, log: Logger) {
    this.#s = s;
    this.#store = store;
    this.#pooled = pooled;
    this.#log = log;
  }

  /** Settles a handler: its settings over the `cache` app's, and its storage from the pool. */
  static async provision(c: CacheConfig, ctx: ProvisionContext): Promise<Cache> {
    const app = await ctx.app<CacheApp>("cache");
    const s = settle(c, app?.options ?? {});
    const log = ctx.logger("http.handlers.cache");
    if (ctx.validating) {
      return new Cache(s, new MemoryStore(s.store.maxEntries, s.store.maxBytes), false, log);
    }
    return new Cache(s, await acquireStore(s.store), true, log);
  }

  /** The storage it uses (tests and the admin API look at it). */
  get store(): CacheStore {
    return this.#store;
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    const s = this.#s;
    const h = c.headers;
    if (
      h.has("upgrade") || (h.get("accept") ?? "").includes("text/event-stream") ||
      (s.exclude !== null && s.exclude.test(c.uri))
    ) return this.#mark(c, await next(c), { fwd: "bypass", detail: "EXCLUDED-REQUEST-URI" });
    const method = c.method;
    if (!s.verbs.has(method)) {
      const res = await next(c);
      if (!SAFE.has(method) && res.status < 400 && responseError(res) === undefined) {
        this.#invalidate(c);
      }
      return this.#mark(c, res, { fwd: "method", detail: "UNSUPPORTED-METHOD" });
    }
    const rule = s.keys.rule(c);
    let bodyHash = "";
    if (rule.body && method !== "GET" && method !== "HEAD") {
      const body = await takeBody(c, MAX_KEY_BODY);
      if (body === null) {
        return this.#mark(c, await next(c), { fwd: "bypass", detail: "REQUEST-BODY-TOO-LARGE" });
      }
      if (body.length) bodyHash = "-" + hashBytes(body);
    }
    const key = s.keys.key(c, rule, method, bodyHash);
    const v: View = {
      c,
      rule,
      key,
      shown: rule.shown ? key : undefined,
      method,
      reqCC: s.ignoreRequest ? NONE : requestDirectives(h.get("cache-control")),
      inm: h.get("if-none-match"),
      ims: h.get("if-modified-since"),
      range: h.get("range"),
      ifRange: h.get("if-range"),
    };
    const now = Date.now();
    // HEAD is answered from a stored GET (RFC 9110 §9.3.2), else from a stored HEAD
    let entry: Entry | null = null;
    if (method === "HEAD" && methodInKey(rule) && s.verbs.has("GET")) {
      entry = this.#find(s.keys.key(c, rule, "GET", ""), v, now);
    }
    entry ??= this.#find(key, v, now);
    if (entry !== null) return this.#stored(v, next, entry, now);
    if (v.reqCC.has("only-if-cached")) return this.#gatewayTimeout(v);
    if (v.range !== null) {
      // ranges are served from stored answers only: a miss is not stored
      return this.#mark(c, await next(c), {
        fwd: "uri-miss",
        key: v.shown,
        detail: "RANGE-REQUEST",
      });
    }
    return this.#miss(v, next);
  }

  /** The variant of `key` that answers the request, if one is stored and not past keeping. */
  #find(key: string, v: View, now: number): Entry | null {
    const list = this.#store.variants(key);
    if (list === undefined) return null;
    let found: Entry | null = null;
    let expired: Entry[] | null = null;
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      if (e.keepUntil < now) (expired ??= []).push(e);
      else if (found === null && (!v.rule.vary || variantMatches(e, v.c.headers))) found = e;
    }
    if (expired !== null) { for (const e of expired) this.#store.remove(e); }
    return found;
  }

  /** A request with a stored answer: a hit, a stale hit, or a revalidation. */
  #stored(v: View, next: Next, e: Entry, now: number): Response | Promise<Response> {
    const s = this.#s;
    const cc = v.reqCC;
    const left = freshnessLeft(e, now);
    const mustValidate = cc.has("no-cache") || (!s.ignoreResponse && e.noCache);
    if (!mustValidate && left > 0) {
      const age = currentAge(e, now);
      const maxAge = deltaSeconds(cc, "max-age");
      const minFresh = deltaSeconds(cc, "min-fresh");
      if (
        (maxAge === undefined || age <= maxAge * 1000) &&
        (minFresh === undefined || left >= minFresh * 1000)
      ) return this.#hit(v, next, e, { hit: true, ttl: secs(left), key: v.shown }, now);
    }
    if (!mustValidate && left <= 0) {
      const staleness = -left;
      const maxStale = cc.get("max-stale");
      if (
        maxStale !== undefined && (s.ignoreResponse || !e.mustRevalidate) &&
        (maxStale === true || staleness <= (deltaSeconds(cc, "max-stale") ?? 0) * 1000)
      ) {
        return this.#hit(v, next, e, { hit: true, ttl: secs(left), key: v.shown }, now);
      }
      if (e.swr > 0 && staleness <= e.swr && (v.method === "GET" || v.method === "HEAD")) {
        this.#background(v, next, e);
        return this.#hit(v, next, e, {
          hit: true,
          ttl: secs(left),
          key: v.shown,
          detail: "STALE-WHILE-REVALIDATE",
        }, now);
      }
    }
    if (cc.has("only-if-cached")) return this.#gatewayTimeout(v);
    return this.#revalidate(v, next, e);
  }

  /** May `e` be served because the upstream failed (stale-if-error, `stale`)? */
  #staleOnError(v: View, e: Entry, now: number): boolean {
    const staleness = -freshnessLeft(e, now);
    if (staleness <= 0) return false;
    if (e.sie > 0 && staleness <= e.sie) return true;
    const req = deltaSeconds(v.reqCC, "stale-if-error");
    if (req !== undefined && staleness <= req * 1000) return true;
    return this.#s.staleMs > 0 && staleness <= this.#s.staleMs && !e.mustRevalidate &&
      !e.noCache;
  }

  /** Revalidates a stored answer, one request per key (the others wait for it). */
  async #revalidate(v: View, next: Next, e: Entry): Promise<Response> {
    const f = this.#s.coalesce ? this.#flights.get(v.key) : undefined;
    if (f !== undefined) {
      const got = await f.done;
      const now = Date.now();
      if (got !== null && freshnessLeft(got, now) > 0 && !got.noCache && this.#fits(v, got)) {
        return this.#hit(v, next, got, {
          fwd: "stale",
          collapsed: true,
          ttl: secs(freshnessLeft(got, now)),
          key: v.shown,
        }, now);
      }
    }
    const fwd: StatusParams = v.reqCC.has("no-cache") ? { fwd: "request" } : { fwd: "stale" };
    return await this.#forward(v, next, e, fwd, this.#s.coalesce && !this.#flights.has(v.key));
  }

  #fits(v: View, e: Entry): boolean {
    return !v.rule.vary || variantMatches(e, v.c.headers);
  }

  /** A miss: wait for a request with the same key that is on its way, or go upstream. */
  async #miss(v: View, next: Next): Promise<Response> {
    const s = this.#s;
    const conditional = v.inm !== null || v.ims !== null;
    if (s.coalesce) {
      const f = this.#flights.get(v.key);
      if (f !== undefined) {
        const got = await f.done;
        const now = Date.now();
        if (got !== null && freshnessLeft(got, now) > 0 && !got.noCache && this.#fits(v, got)) {
          return this.#hit(v, next, got, {
            fwd: "uri-miss",
            collapsed: true,
            ttl: secs(freshnessLeft(got, now)),
            key: v.shown,
          }, now);
        }
        // the answer was not stored or is not this request's: on its own, not waited for
        return this.#forward(
          v,
          next,
          null,
          { fwd: got === null ? "uri-miss" : "vary-miss" },
          false,
        );
      }
    }
    // a conditional request goes up as it is: its 304 would be nothing to store or to share
    return await this.#forward(v, next, null, { fwd: "uri-miss" }, s.coalesce && !conditional);
  }

  /**
   * Sends the request upstream (with the stored answer's validators when revalidating `stale`)
   * and handles the answer; `lead` makes the others with the same key wait for it.
   */
  async #forward(
    v: View,
    next: Next,
    stale: Entry | null,
    fwd: StatusParams,
    lead: boolean,
  ): Promise<Response> {
    const c = v.c;
    let f: Flight | null = null;
    if (lead) {
      f = flight();
      this.#flights.set(v.key, f);
    }
    const done = (e: Entry | null) => {
      if (f === null) return;
      if (this.#flights.get(v.key) === f) this.#flights.delete(v.key);
      f.settle(e);
      f = null;
    };
    const generation = this.#store.generation;
    if (stale !== null) {
      const h = c.mutableHeaders();
      h.delete("if-none-match");
      h.delete("if-modified-since");
      if (stale.etag !== null) h.set("if-none-match", stale.etag);
      if (stale.lastModified !== null) h.set("if-modified-since", stale.lastModified);
    }
    const requestTime = Date.now();
    let res: Response;
    try {
      res = await next(c);
    } catch (err) {
      done(null);
      if (stale !== null && this.#staleOnError(v, stale, Date.now())) {
        return this.#servedStale(v, next, stale, 502);
      }
      throw err;
    }
    const responseTime = Date.now();
    if (responseError(res) !== undefined || FAILURES.has(res.status)) {
      done(null);
      if (stale !== null && this.#staleOnError(v, stale, responseTime)) {
        await res.body?.cancel();
        return this.#servedStale(v, next, stale, res.status);
      }
      return this.#mark(c, res, {
        ...fwd,
        key: v.shown,
        detail: responseError(res) ? "SERVE-HTTP-ERROR" : "UNCACHEABLE-STATUS-CODE",
      });
    }
    if (stale !== null && res.status === 304) {
      await res.body?.cancel();
      const oldSize = stale.size;
      updateFrom304(stale, res.headers, requestTime, responseTime, this.#s.ttlMs);
      this.#memos.delete(stale);
      stale.size = entrySize(
        stale,
        stale.body.kind === "memory" ? stale.body.bytes.length : stale.body.size,
      );
      stale.keepUntil = this.#keepUntil(stale);
      this.#store.updated(stale, oldSize);
      done(stale);
      return this.#hit(v, next, stale, {
        ...fwd,
        fwdStatus: 304,
        ttl: secs(freshnessLeft(stale, responseTime)),
        key: v.shown,
      }, responseTime);
    }
    return this.#admit(v, res, requestTime, responseTime, generation, done, {
      ...fwd,
      ...(stale !== null ? { fwdStatus: res.status } : {}),
    });
  }

  #servedStale(v: View, next: Next, e: Entry, status: number): Promise<Response> | Response {
    const now = Date.now();
    return this.#hit(v, next, e, {
      fwd: "stale",
      fwdStatus: status,
      ttl: secs(freshnessLeft(e, now)),
      key: v.shown,
      detail: "STALE-IF-ERROR",
    }, now);
  }

  /**
   * When an entry may be dropped: a lifetime (at least `ttl`) after it went stale, so that it
   * can be revalidated and serve `max-stale` and `stale-if-error` requests, or longer when
   * `stale`, `stale-while-revalidate` or `stale-if-error` say so.
   */
  #keepUntil(e: Entry): number {
    const extra = Math.max(this.#s.staleMs, e.swr, e.sie, e.lifetime, this.#s.ttlMs);
    return e.responseTime - e.initialAge + e.lifetime + extra;
  }

  /** Why an answer is not stored (a Souin detail), or null when it is. */
  #refusal(
    v: View,
    status: number,
    h: Headers,
    cc: Directives,
    dropped: Set<string>,
  ): string | null {
    const s = this.#s;
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

  /** Decides whether a new answer is stored; stores it as it streams to the client. */
  #admit(
    v: View,
    res: Response,
    requestTime: number,
    responseTime: number,
    generation: number,
    done: (e: Entry | null) => void,
    fwd: StatusParams,
  ): Response {
    const s = this.#s;
    const c = v.c;
    const h = new Headers(res.headers);
    if (s.defaultCacheControl !== null && !h.has("cache-control")) {
      h.set("cache-control", s.defaultCacheControl);
    }
    if (!h.has("date")) h.set("date", httpDate(responseTime));
    const { cc, explicit, dropped } = storability(h, responseTime);
    let reason = this.#refusal(v, res.status, h, cc, dropped);
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
      return answer(res.body, { ...fwd, key: v.shown, detail: reason });
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
      requestTime,
      responseTime,
      initialAge: initialAge(h, requestTime, responseTime),
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
    e.keepUntil = this.#keepUntil(e);
    const store = this.#store;
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
        if (store.generation !== generation) {
          store.discard(body);
          done(null);
          return;
        }
        e.body = body;
        e.size = entrySize(e, sink.size);
        done(store.put(e) ? e : null);
      } catch (err) {
        this.#log.error("storing a cached answer failed", { key: v.key, error: String(err) });
        done(null);
      }
    };
    // `stored` when it is known now (a length within the limit, or no body); a body of
    // unknown length is stored if it ends within the limit
    const known = res.body === null || v.method === "HEAD" || h.has("content-length");
    const status: StatusParams = { ...fwd, stored: known, key: v.shown };
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

  /** Answers from a stored entry: `304`, `206`, `HEAD`, or the whole answer. */
  async #hit(v: View, next: Next, e: Entry, p: StatusParams, now: number): Promise<Response> {
    const age = secs(Math.max(0, currentAge(e, now)));
    let upstream: string | null = null;
    for (let i = 0; i < e.headers.length; i++) {
      if (e.headers[i][0] === "cache-status") upstream = e.headers[i][1];
    }
    const status = appendStatus(upstream, statusMember(this.#s.name, p));
    const c = v.c;
    const plain = v.method === "GET" && v.inm === null && v.ims === null && v.range === null &&
      e.body.kind === "memory" && c.respHeaders === null && c.serverHeader && e.status !== 204;
    if (plain) {
      // the common hit: the same answer to the second as the last one, cloned (far cheaper
      // than a Response built with a header list), with its Server field, final
      const memo = this.#memos.get(e);
      c.headersFinal = true;
      if (memo !== undefined && memo.age === age && memo.status === status) return memo.res.clone();
    }
    const fields: [string, string][] = e.headers.filter(([k]) => k !== "cache-status");
    if (plain) {
      fields.push(["age", String(age)], ["cache-status", status]);
      if (!fields.some(([k]) => k === "server")) fields.push(["server", "Gatehouse"]);
      const res = new Response((e.body as { bytes: Uint8Array<ArrayBuffer> }).bytes, {
        status: e.status,
        headers: fields,
      });
      this.#memos.delete(e);
      this.#memos.set(e, { age, status, res });
      if (this.#memos.size > MEMOS) this.#memos.delete(this.#memos.keys().next().value!);
      return res.clone();
    }
    const get = v.method === "GET" || v.method === "HEAD";
    if (get && this.#notModified(v, e)) {
      const h = fields.filter(([k]) => !NOT_IN_304.has(k));
      h.push(["age", String(age)], ["cache-status", status]);
      return new Response(null, { status: 304, headers: h });
    }
    fields.push(["age", String(age)], ["cache-status", status]);
    if (v.method === "HEAD") return new Response(null, { status: e.status, headers: fields });
    let body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
    if (e.body.kind === "memory") {
      body = e.body.bytes;
      if (v.range !== null && e.status === 200 && this.#rangeApplies(v, e)) {
        const ranged = this.#ranged(body, v.range, fields);
        if (ranged) return ranged;
      }
    } else {
      body = await this.#store.body(e);
      // the file is gone: as if nothing were stored
      if (body === null) return this.#forward(v, next, null, { fwd: "uri-miss" }, false);
    }
    return new Response(e.status === 204 ? null : body, { status: e.status, headers: fields });
  }

  /** RFC 9110 §13.2.2: If-None-Match first, If-Modified-Since only without it. */
  #notModified(v: View, e: Entry): boolean {
    if (v.inm !== null) return noneMatch(v.inm, e.etag);
    if (v.ims !== null && e.lastModified !== null) {
      const since = parseHttpDate(v.ims);
      const lm = parseHttpDate(e.lastModified);
      return !Number.isNaN(since) && !Number.isNaN(lm) && lm <= since;
    }
    return false;
  }

  /** If-Range: the stored answer must be the one the client has (strong ETag or exact date). */
  #rangeApplies(v: View, e: Entry): boolean {
    const ir = v.ifRange;
    if (ir === null) return true;
    if (ir.startsWith('"')) return e.etag !== null && !e.etag.startsWith("W/") && e.etag === ir;
    return e.lastModified !== null && e.lastModified === ir;
  }

  #ranged(
    bytes: Uint8Array<ArrayBuffer>,
    range: string,
    fields: [string, string][],
  ): Response | null {
    const plan = planRange(range, bytes.length);
    const rest = () => fields.filter(([k]) => k !== "content-length" && k !== "content-range");
    if (plan.kind === "unsatisfiable" || plan.kind === "invalid") {
      return new Response(null, {
        status: 416,
        headers: [...rest(), ["content-range", `bytes */${bytes.length}`]],
      });
    }
    if (plan.kind !== "partial" || plan.ranges.length !== 1) return null;
    const { start, length } = plan.ranges[0];
    return new Response(bytes.subarray(start, start + length), {
      status: 206,
      headers: [
        ...rest(),
        ["content-range", `bytes ${start}-${start + length - 1}/${bytes.length}`],
      ],
    });
  }

  /** Revalidates `e` in the background (once per key); the client is answered stale. */
  #background(v: View, next: Next, e: Entry): void {
    if (this.#flights.has(v.key)) return;
    const c = detached(v.c, e.method);
    const bv: View = {
      ...v,
      c,
      method: e.method,
      inm: null,
      ims: null,
      range: null,
      ifRange: null,
    };
    (async () => {
      const res = await this.#forward(bv, next, e, { fwd: "stale" }, true);
      await res.body?.pipeTo(new WritableStream());
    })().catch((err) =>
      this.#log.debug("background revalidation failed", { key: v.key, error: String(err) })
    );
  }

  /** `504` for `only-if-cached` without a usable stored answer (RFC 9111 §5.2.1.7). */
  #gatewayTimeout(v: View): Response {
    return new Response(null, {
      status: 504,
      headers: {
        "cache-status": statusMember(this.#s.name, {
          fwd: "miss",
          key: v.shown,
          detail: "ONLY-IF-CACHED",
        }),
      },
    });
  }

  /** Drops what is stored for the request's URI (RFC 9111 §4.4). */
  #invalidate(c: RequestContext): void {
    const rule = this.#s.keys.rule(c);
    for (const m of ["GET", "HEAD"]) this.#store.delete(this.#s.keys.key(c, rule, m, ""));
  }

  /** Adds a `Cache-Status` member to an answer that goes through. */
  #mark(c: RequestContext, res: Response, p: StatusParams): Response {
    const member = statusMember(this.#s.name, p);
    if (responseError(res) !== undefined) {
      c.responseHeaders().set("cache-status", member);
      return res;
    }
    const h = new Headers(res.headers);
    h.set("cache-status", appendStatus(h.get("cache-status"), member));
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: h });
  }

  /** Lets go of the storage. */
  cleanup(): void {
    if (this.#pooled) releaseStore(this.#store);
  }
}
