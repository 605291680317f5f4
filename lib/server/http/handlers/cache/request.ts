/**
 * What the cache reads of one request once, before anything changes it: its key and key
 * settings, its directives, its own validators and range (a revalidation replaces the
 * validators upstream); a request body read for the key and put back; and a detached copy of
 * a request for a background revalidation.
 *
 * @module
 */
import { RequestContext } from "../../context.ts";
import { type Directives, parseCacheControl } from "./cache_control.ts";
import type { KeyRule } from "./key.ts";

/** One request's view of the cache. */
export interface View {
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

/** No directives. */
export const NONE: Directives = new Map();

/** A request's `Cache-Control` (the shared empty map when it has none). */
export const requestDirectives = (v: string | null): Directives =>
  v === null ? NONE : parseCacheControl(v);

/** True when the key tells methods apart (a template may not). */
export const methodInKey = (r: KeyRule): boolean => r.method && r.template === null;

/** Whole seconds of a duration in ms (rounded down, negative ones too). */
export const secs = (ms: number): number => Math.floor(ms / 1000);

/** A detached copy of a request, for a revalidation its client does not wait for. */
export function detached(c: RequestContext, method: string): RequestContext {
  const req = new Request(`${c.scheme}://${c.host}${c.uri}`, { method, headers: c.headers });
  const { completed: _c, upgrade: _u, push: _p, ...info } = c.info;
  const d = new RequestContext(req, info, c.server);
  d.settleHost();
  if (c.vars) d.vars = new Map(c.vars);
  if (c.extra) d.extra = new Map(c.extra);
  return d;
}

/** Reads a request body of up to `max` bytes (null when larger), and puts it back. */
export async function takeBody(c: RequestContext, max: number): Promise<Uint8Array | null> {
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
