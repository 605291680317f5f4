/**
 * `forward_auth` recognised in a `reverse_proxy` handler. The adapter writes `forward_auth`
 * as a proxy that sets `X-Forwarded-Method` / `X-Forwarded-Uri`, rewrites the request to
 * `GET <uri>`, and whose first response handler (any 2xx) runs `vars` and, per copied
 * header, a delete then a set when the auth service answered with it. The reverse direction
 * reads `uri` and `copy_headers` back, builds those parts again for comparison, and leaves
 * the rest of the handler to the `reverse_proxy` writer (`forward_auth` hands its other
 * subdirectives to `reverse_proxy`).
 *
 * @module
 */
import { stableJSON } from "../../../caddyfile/types.ts";
import { canonicalHeader } from "../../../caddyfile/writer/matchers.ts";
import { isObject } from "../../../caddyfile/writer/problems.ts";

type Obj = Record<string, unknown>;

const FORWARDED: Obj = {
  "X-Forwarded-Method": ["{http.request.method}"],
  "X-Forwarded-Uri": ["{http.request.uri}"],
};

const PREFIX = "http.reverse_proxy.header.";

/** What a `forward_auth` directive is made of. */
export interface ForwardAuth {
  /** The `uri` subdirective. */
  uri: string;
  /** `copy_headers` as `[from, to]` pairs as written (`from` spelled to sort as read). */
  copy: [string, string][];
  /** The handler without the parts `forward_auth` makes (`handle_response[0]` stays; skip it). */
  rest: Obj;
}

/** The response handler of a 2xx answer for the copied headers (the adapter's expansion). */
function approved(copy: [string, string][]): Obj {
  const routes: Obj[] = [{ handle: [{ handler: "vars" }] }];
  for (const [from, to] of [...copy].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    const field = canonicalHeader(to);
    const placeholder = `{${PREFIX}${canonicalHeader(from)}}`;
    routes.push({ handle: [{ handler: "headers", request: { delete: [field] } }] });
    routes.push({
      match: [{ not: [{ vars: { [placeholder]: [""] } }] }],
      handle: [{ handler: "headers", request: { set: { [field]: [placeholder] } } }],
    });
  }
  return { match: { status_code: [2] }, routes };
}

/** The `[from, to]` pairs of the copy routes (after the `vars` route), as read. */
function copiesOf(routes: unknown[]): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (let i = 1; i + 1 < routes.length; i += 2) {
    const set = ((routes[i + 1] as Obj)?.handle as Obj[] | undefined)?.[0];
    const fields = ((set?.request as Obj | undefined)?.set) as Obj | undefined;
    if (!isObject(fields) || Object.keys(fields).length !== 1) return undefined;
    const [[to, vals]] = Object.entries(fields);
    const v = Array.isArray(vals) ? vals[0] : undefined;
    if (typeof v !== "string" || !v.startsWith(`{${PREFIX}`) || !v.endsWith("}")) return;
    out.push([v.slice(PREFIX.length + 1, -1), to]);
  }
  return out;
}

/**
 * Spellings of the copied header names that the adapter sorts into the order read (it sorts
 * the names as written, then writes them canonical): `X-B` sorts before `remote-email`,
 * `Remote-Email` does not. The canonical spelling where it keeps the order (`readable`),
 * else the smallest that does.
 */
function spelled(pairs: [string, string][], readable: boolean): [string, string][] | undefined {
  const out: [string, string][] = [];
  let prev: string | undefined;
  for (const [from, to] of pairs) {
    const names = [from.toUpperCase(), from, from.toLowerCase()]
      .filter((n) => canonicalHeader(n) === from)
      .sort();
    if (readable) names.sort((a, b) => (a === from ? -1 : b === from ? 1 : 0));
    const name = names.find((n) => prev === undefined || n > prev);
    if (name === undefined) return undefined;
    out.push([name, to]);
    prev = name;
  }
  return out;
}

/** `h` as a `forward_auth` directive's parts, or undefined when it is not one. */
export function forwardAuthOf(h: Obj): ForwardAuth | undefined {
  const rw = h.rewrite;
  if (!isObject(rw) || rw.method !== "GET" || typeof rw.uri !== "string") return undefined;
  if (Object.keys(rw).length !== 2) return undefined;
  const headers = h.headers, request = isObject(headers) ? headers.request : undefined;
  const set = isObject(request) ? request.set : undefined;
  if (!isObject(set)) return undefined;
  for (const [k, v] of Object.entries(FORWARDED)) {
    if (stableJSON(set[k]) !== stableJSON(v)) return undefined;
  }
  const hr = h.handle_response;
  if (!Array.isArray(hr) || !isObject(hr[0]) || !Array.isArray(hr[0].routes)) return undefined;
  const read = copiesOf(hr[0].routes);
  const want = stableJSON(hr[0]);
  const copy = [true, false].map((readable) => read && spelled(read, readable))
    .find((c) => c && stableJSON(approved(c)) === want);
  if (!copy) return undefined;
  const restSet = { ...set };
  for (const k of Object.keys(FORWARDED)) delete restSet[k];
  const restRequest: Obj = { ...request as Obj, set: restSet };
  if (Object.keys(restSet).length === 0) delete restRequest.set;
  const restHeaders: Obj = { ...headers as Obj, request: restRequest };
  if (Object.keys(restRequest).length === 0) delete restHeaders.request;
  const rest: Obj = { ...h, headers: restHeaders };
  if (Object.keys(restHeaders).length === 0) delete rest.headers;
  delete rest.rewrite;
  return { uri: rw.uri, copy, rest };
}
