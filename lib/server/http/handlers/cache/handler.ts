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
import type { RequestContext } from "../../context.ts";
import { responseError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { admit, keepUntil } from "./admit.ts";
import { Answers } from "./answer.ts";
import type { CacheApp } from "./app.ts";
import { deltaSeconds } from "./cache_control.ts";
import type { CacheConfig } from "./config.ts";
import { currentAge, type Entry, freshnessLeft, updateFrom304 } from "./entry.ts";
import { hashBytes } from "./key.ts";
import {
  detached,
  methodInKey,
  NONE,
  requestDirectives,
  secs,
  takeBody,
  type View,
} from "./request.ts";
import { MAX_KEY_BODY, type Settings, settle } from "./settings.ts";
import type { StatusParams } from "./status.ts";
import { type CacheStore, entrySize, MemoryStore, variantMatches } from "./store.ts";
import { acquireStore, releaseStore } from "./stores.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
/** Answers that count as the upstream failing (stale-if-error), never stored. */
const FAILURES = new Set([500, 502, 503, 504]);

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

/** A provisioned `cache` handler (see the module documentation). */
export class Cache implements HttpHandler {
  readonly #s: Settings;
  readonly #store: CacheStore;
  readonly #pooled: boolean;
  readonly #log: Logger;
  readonly #flights = new Map<string, Flight>();
  /** The last answer built from each of the most recently hit entries. */
  readonly #answers: Answers;

  private constructor(s: Settings, store: CacheStore, pooled: boolean, log: Logger) {
    this.#s = s;
    this.#store = store;
    this.#pooled = pooled;
    this.#log = log;
    this.#answers = new Answers(s.name, store);
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
    ) {
      return this.#answers.mark(c, await next(c), {
        fwd: "bypass",
        detail: "EXCLUDED-REQUEST-URI",
      });
    }
    const method = c.method;
    if (!s.verbs.has(method)) {
      const res = await next(c);
      if (!SAFE.has(method) && res.status < 400 && responseError(res) === undefined) {
        this.#invalidate(c);
      }
      return this.#answers.mark(c, res, { fwd: "method", detail: "UNSUPPORTED-METHOD" });
    }
    const rule = s.keys.rule(c);
    let bodyHash = "";
    if (rule.body && method !== "GET" && method !== "HEAD") {
      const body = await takeBody(c, MAX_KEY_BODY);
      if (body === null) {
        return this.#answers.mark(c, await next(c), {
          fwd: "bypass",
          detail: "REQUEST-BODY-TOO-LARGE",
        });
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
    if (v.reqCC.has("only-if-cached")) return this.#answers.gatewayTimeout(v);
    if (v.range !== null) {
      // ranges are served from stored answers only: a miss is not stored
      return this.#answers.mark(c, await next(c), {
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
    if (cc.has("only-if-cached")) return this.#answers.gatewayTimeout(v);
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
      return this.#answers.mark(c, res, {
        ...fwd,
        key: v.shown,
        detail: responseError(res) ? "SERVE-HTTP-ERROR" : "UNCACHEABLE-STATUS-CODE",
      });
    }
    if (stale !== null && res.status === 304) {
      await res.body?.cancel();
      const oldSize = stale.size;
      updateFrom304(stale, res.headers, requestTime, responseTime, this.#s.ttlMs);
      this.#answers.forget(stale);
      stale.size = entrySize(
        stale,
        stale.body.kind === "memory" ? stale.body.bytes.length : stale.body.size,
      );
      stale.keepUntil = keepUntil(this.#s, stale);
      this.#store.updated(stale, oldSize);
      done(stale);
      return this.#hit(v, next, stale, {
        ...fwd,
        fwdStatus: 304,
        ttl: secs(freshnessLeft(stale, responseTime)),
        key: v.shown,
      }, responseTime);
    }
    return admit({
      s: this.#s,
      store: this.#store,
      log: this.#log,
      v,
      requestTime,
      responseTime,
      generation,
      done,
      fwd: { ...fwd, ...(stale !== null ? { fwdStatus: res.status } : {}) },
    }, res);
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

  /** Answers from a stored entry; a miss when its body file is gone. */
  async #hit(v: View, next: Next, e: Entry, p: StatusParams, now: number): Promise<Response> {
    return await this.#answers.from(v, e, p, now) ??
      await this.#forward(v, next, null, { fwd: "uri-miss" }, false);
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

  /** Drops what is stored for the request's URI (RFC 9111 §4.4). */
  #invalidate(c: RequestContext): void {
    const rule = this.#s.keys.rule(c);
    for (const m of ["GET", "HEAD"]) this.#store.delete(this.#s.keys.key(c, rule, m, ""));
  }

  /** Lets go of the storage. */
  cleanup(): void {
    if (this.#pooled) releaseStore(this.#store);
  }
}
