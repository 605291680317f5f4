/**
 * Answers made from a stored entry: `304` for a conditional request it satisfies
 * (RFC 9110 §13.2.2), `HEAD`, one `Range` of a body in memory (`206`, or `416`), or the whole
 * answer; each with its `Age` and a `Cache-Status` member. The common one — a plain `GET`
 * answered from memory — is a clone of the last answer built for the entry within the same
 * second, which costs far less than a Response built from a header list.
 *
 * @module
 */
import { responseError } from "../../errors.ts";
import type { RequestContext } from "../../context.ts";
import { planRange } from "../file_server/range.ts";
import { currentAge, type Entry } from "./entry.ts";
import { parseHttpDate } from "./http_date.ts";
import { secs, type View } from "./request.ts";
import { appendStatus, statusMember, type StatusParams } from "./status.ts";
import type { CacheStore } from "./store.ts";

/** Answers kept ready to clone (one per recently hit entry). */
export const MEMOS = 1024;
/** Fields a `304` made from a stored answer leaves out (RFC 9110 §15.4.5). */
const NOT_IN_304 = new Set(["content-length", "content-type", "content-encoding", "content-range"]);

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

/** RFC 9110 §13.2.2: If-None-Match first, If-Modified-Since only without it. */
function notModified(v: View, e: Entry): boolean {
  if (v.inm !== null) return noneMatch(v.inm, e.etag);
  if (v.ims !== null && e.lastModified !== null) {
    const since = parseHttpDate(v.ims);
    const lm = parseHttpDate(e.lastModified);
    return !Number.isNaN(since) && !Number.isNaN(lm) && lm <= since;
  }
  return false;
}

/** If-Range: the stored answer must be the one the client has (strong ETag or exact date). */
function rangeApplies(v: View, e: Entry): boolean {
  const ir = v.ifRange;
  if (ir === null) return true;
  if (ir.startsWith('"')) return e.etag !== null && !e.etag.startsWith("W/") && e.etag === ir;
  return e.lastModified !== null && e.lastModified === ir;
}

function ranged(
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
    headers: [...rest(), ["content-range", `bytes ${start}-${start + length - 1}/${bytes.length}`]],
  });
}

/** Makes the answers of one handler (its cache name, its clones). */
export class Answers {
  readonly #name: string;
  readonly #store: CacheStore;
  readonly #memos = new Map<Entry, { age: number; status: string; res: Response }>();

  /** Answers under `name` (as `Cache-Status` writes it) from `store`. */
  constructor(name: string, store: CacheStore) {
    this.#name = name;
    this.#store = store;
  }

  /** Forgets the answer kept for an entry whose fields changed. */
  forget(e: Entry): void {
    this.#memos.delete(e);
  }

  /**
   * The answer to `v` from `e`, with `p` in `Cache-Status`; null when the entry's body file is
   * gone (the entry is then dropped: the caller treats the request as a miss).
   */
  async from(v: View, e: Entry, p: StatusParams, now: number): Promise<Response | null> {
    const age = secs(Math.max(0, currentAge(e, now)));
    let upstream: string | null = null;
    for (let i = 0; i < e.headers.length; i++) {
      if (e.headers[i][0] === "cache-status") upstream = e.headers[i][1];
    }
    const status = appendStatus(upstream, statusMember(this.#name, p));
    const c = v.c;
    const plain = v.method === "GET" && v.inm === null && v.ims === null && v.range === null &&
      e.body.kind === "memory" && c.respHeaders === null && c.serverHeader && e.status !== 204;
    if (plain) {
      // the answer carries its Server field and is final
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
    if ((v.method === "GET" || v.method === "HEAD") && notModified(v, e)) {
      const h = fields.filter(([k]) => !NOT_IN_304.has(k));
      h.push(["age", String(age)], ["cache-status", status]);
      return new Response(null, { status: 304, headers: h });
    }
    fields.push(["age", String(age)], ["cache-status", status]);
    if (v.method === "HEAD") return new Response(null, { status: e.status, headers: fields });
    let body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
    if (e.body.kind === "memory") {
      body = e.body.bytes;
      if (v.range !== null && e.status === 200 && rangeApplies(v, e)) {
        const r = ranged(body, v.range, fields);
        if (r) return r;
      }
    } else {
      body = await this.#store.body(e);
      if (body === null) return null;
    }
    return new Response(e.status === 204 ? null : body, { status: e.status, headers: fields });
  }

  /** `504` for `only-if-cached` without a usable stored answer (RFC 9111 §5.2.1.7). */
  gatewayTimeout(v: View): Response {
    return new Response(null, {
      status: 504,
      headers: {
        "cache-status": statusMember(this.#name, {
          fwd: "miss",
          key: v.shown,
          detail: "ONLY-IF-CACHED",
        }),
      },
    });
  }

  /** Adds a `Cache-Status` member to an answer that goes through. */
  mark(c: RequestContext, res: Response, p: StatusParams): Response {
    const member = statusMember(this.#name, p);
    if (responseError(res) !== undefined) {
      c.responseHeaders().set("cache-status", member);
      return res;
    }
    const h = new Headers(res.headers);
    h.set("cache-status", appendStatus(h.get("cache-status"), member));
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: h });
  }
}
