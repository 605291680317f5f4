/**
 * The request as a template sees it (`.Req`, `.OriginalReq`): Go's `*http.Request` with its
 * commonly read fields and methods (`Method`, `URL`, `Header`, `Host`, `RemoteAddr`,
 * `RequestURI`, `Proto`, `ContentLength`, `TLS`, `Cookie`, `UserAgent`, `Referer`), `*url.URL`
 * (`Scheme`, `Host`, `Path`, `RawPath`, `RawQuery`, `Fragment`, `String`, `Query`,
 * `Hostname`, `Port`, `EscapedPath`) and `http.Header` / `url.Values` (`Get`, `Values`, keys).
 * Header names are canonical as Go's (`User-Agent`); repeated fields are one value joined
 * with ", ", as the Fetch API's `Headers` keeps them.
 *
 * @module
 */
import { requestProto } from "../../../module/listener.ts";
import { type RequestContext, splitHostPort } from "../../context.ts";
import {
  FuncError,
  GoFunc,
  GoInt,
  GoObject,
  NilPtr,
  NO_FIELD,
  typeArray,
} from "./gotemplate/mod.ts";
import { quote, sprintValue } from "./gotemplate/fmt.ts";

/** Go's `textproto.CanonicalMIMEHeaderKey`. */
export function canonicalKey(k: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/.test(k)) return k;
  return k.toLowerCase().replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase());
}

const fn0 = (name: string, impl: () => unknown) => new GoFunc(name, [], null, impl, false);
const fnS = (name: string, impl: (s: string) => unknown) =>
  new GoFunc(name, ["string"], null, (s) => impl(s as string), false);

/** A `map[string][]string` with `Get` and `Values` (`http.Header`, `url.Values`). */
export class MultiMap extends GoObject {
  override readonly kind = "map" as const;
  constructor(
    readonly goType: string,
    readonly map: Map<string, string[]>,
    readonly canonical: boolean,
  ) {
    super();
  }
  #key(k: string): string {
    return this.canonical ? canonicalKey(k) : k;
  }
  override method(name: string): GoFunc | undefined {
    switch (name) {
      case "Get":
        return fnS(name, (k) => this.map.get(this.#key(k))?.[0] ?? "");
      case "Values":
        return fnS(name, (k) => typeArray([...(this.map.get(this.#key(k)) ?? [])], "[]string"));
      case "Has":
        return fnS(name, (k) => this.map.has(this.#key(k)));
    }
    return undefined;
  }
  override field(name: string): unknown {
    const v = this.map.get(name);
    return v ? typeArray([...v], "[]string") : NO_FIELD;
  }
  override zero(): unknown {
    return typeArray([], "[]string");
  }
  override entries(): [unknown, unknown][] {
    return [...this.map.keys()].sort().map((
      k,
    ) => [k, typeArray([...this.map.get(k)!], "[]string")]);
  }
  override format(): string {
    return sprintValue(new Map(this.entries()));
  }
}

/** `http.Header` of a Fetch `Headers` (without `Host`, as Go keeps it in `Request.Host`). */
export function goHeader(h: Headers, goType = "http.Header"): MultiMap {
  const m = new Map<string, string[]>();
  for (const [k, v] of h) {
    if (k === "host") continue;
    const key = canonicalKey(k);
    const list = m.get(key) ?? [];
    list.push(v);
    m.set(key, list);
  }
  return new MultiMap(goType, m, true);
}

/** Go's `url.ParseQuery` (bad escapes kept as written). */
export function parseQuery(q: string): MultiMap {
  const m = new Map<string, string[]>();
  for (const part of q.split("&")) {
    if (part === "" || part.includes(";")) continue;
    const eq = part.indexOf("=");
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s.replaceAll("+", " "));
      } catch {
        return null;
      }
    };
    const k = dec(eq < 0 ? part : part.slice(0, eq));
    const v = dec(eq < 0 ? "" : part.slice(eq + 1));
    if (k === null || v === null) continue;
    const list = m.get(k) ?? [];
    list.push(v);
    m.set(k, list);
  }
  return new MultiMap("url.Values", m, false);
}

/** `*url.URL` of a request path and query. */
export class GoURL extends GoObject {
  readonly goType = "*url.URL";
  constructor(
    readonly rawPath: string,
    readonly path: string,
    readonly rawQuery: string,
  ) {
    super();
  }
  override field(name: string): unknown {
    switch (name) {
      case "Scheme":
      case "Opaque":
      case "Host":
      case "Fragment":
      case "RawFragment":
        return "";
      case "Path":
        return this.path;
      case "RawPath":
        return this.rawPath === encodeURI(this.path) ? "" : this.rawPath;
      case "RawQuery":
        return this.rawQuery;
      case "ForceQuery":
      case "OmitHost":
        return false;
      case "User":
        return new NilPtr("*url.Userinfo");
    }
    return NO_FIELD;
  }
  override method(name: string): GoFunc | undefined {
    switch (name) {
      case "String":
        return fn0(name, () => this.format());
      case "EscapedPath":
        return fn0(name, () => this.rawPath);
      case "Query":
        return fn0(name, () => parseQuery(this.rawQuery));
      case "Hostname":
      case "Port":
        return fn0(name, () => "");
      case "IsAbs":
        return fn0(name, () => false);
      case "RequestURI":
        return fn0(name, () => this.format());
    }
    return undefined;
  }
  override format(): string {
    return this.rawQuery ? `${this.rawPath}?${this.rawQuery}` : this.rawPath;
  }
}

/** A cookie (`*http.Cookie`). */
class GoCookie extends GoObject {
  readonly goType = "*http.Cookie";
  constructor(readonly name: string, readonly value: string) {
    super();
  }
  override field(name: string): unknown {
    if (name === "Name") return this.name;
    if (name === "Value") return this.value;
    return NO_FIELD;
  }
  override format(): string {
    return `${this.name}=${this.value}`;
  }
}

/** The request's cookies, as Go's `Request.Cookies` reads them (quotes removed). */
export function requestCookies(h: Headers): [string, string][] {
  const out: [string, string][] = [];
  const raw = h.get("cookie");
  if (!raw) return out;
  for (let part of raw.split(/;|, /)) {
    part = part.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) continue;
    let value = eq < 0 ? "" : part.slice(eq + 1);
    if (value.length > 1 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    if (!/^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e ,]*$/.test(value)) continue;
    out.push([name, value]);
  }
  return out;
}

/** `*http.Request`: the current request, or the original one (before rewrites). */
export class GoRequest extends GoObject {
  readonly goType = "*http.Request";
  constructor(readonly c: RequestContext, readonly original: boolean) {
    super();
  }
  get #rawPath(): string {
    return this.original ? this.c.origRawPath : this.c.rawPath;
  }
  get #query(): string {
    return this.original ? this.c.origQuery : this.c.query;
  }
  override field(name: string): unknown {
    const c = this.c;
    switch (name) {
      case "Method":
        return this.original ? c.origMethod : c.method;
      case "URL": {
        let path = this.#rawPath;
        try {
          path = decodeURIComponent(path);
        } catch { /* kept */ }
        return new GoURL(this.#rawPath, path, this.#query);
      }
      case "Header":
        return goHeader(c.headers);
      case "Host":
        return c.host;
      case "RemoteAddr": {
        const h = c.remoteHost;
        return h.includes(":") ? `[${h}]:${c.remotePort}` : `${h}:${c.remotePort}`;
      }
      case "RequestURI":
        return c.origQuery ? `${c.origRawPath}?${c.origQuery}` : c.origRawPath;
      case "Proto":
        return requestProto(c.info);
      case "ProtoMajor":
        return BigInt(requestProto(c.info)[5]);
      case "ProtoMinor":
        return BigInt(requestProto(c.info)[7]);
      case "ContentLength": {
        const n = Number(c.headers.get("content-length") ?? "0");
        return new GoInt("int64", BigInt(Number.isSafeInteger(n) ? n : 0));
      }
      case "TLS":
        return c.info.tls ? new GoTLS(c) : new NilPtr("*tls.ConnectionState");
      case "Close":
        return false;
      case "Trailer":
        return goHeader(new Headers());
      case "Form":
      case "PostForm":
        return new MultiMap("url.Values", new Map(), false);
    }
    return NO_FIELD;
  }
  override method(name: string): GoFunc | undefined {
    const c = this.c;
    switch (name) {
      case "UserAgent":
        return fn0(name, () => c.headers.get("user-agent") ?? "");
      case "Referer":
        return fn0(name, () => c.headers.get("referer") ?? "");
      case "Cookie":
        return fnS(name, (n) => {
          const found = requestCookies(c.headers).find(([k]) => k === n);
          if (!found) throw new FuncError("http: named cookie not present");
          return new GoCookie(found[0], found[1]);
        });
      case "Cookies":
        return fn0(
          name,
          () =>
            typeArray(
              requestCookies(c.headers).map(([k, v]) => new GoCookie(k, v)),
              "[]*http.Cookie",
            ),
        );
      case "ProtoAtLeast":
        return new GoFunc(name, ["int", "int"], null, (a, b) => {
          const p = requestProto(c.info);
          const [ma, mi] = [BigInt(p[5]), BigInt(p[7])];
          return ma > (a as bigint) || (ma === a && mi >= (b as bigint));
        }, false);
    }
    return undefined;
  }
  override format(): string {
    return `&{${this.field("Method")} ${quote(this.c.uri)} ...}`;
  }
}

/** `*tls.ConnectionState`: the fields a template reads. */
class GoTLS extends GoObject {
  readonly goType = "*tls.ConnectionState";
  constructor(readonly c: RequestContext) {
    super();
  }
  override field(name: string): unknown {
    const t = this.c.info.tls!;
    switch (name) {
      case "Version":
        return new GoInt("uint", BigInt(t.version ?? 0));
      case "HandshakeComplete":
        return true;
      case "DidResume":
        return !!t.resumed;
      case "CipherSuite":
        return new GoInt("uint", BigInt(t.cipherSuite ?? 0));
      case "NegotiatedProtocol":
        return t.proto ?? "";
      case "ServerName":
        return t.serverName ?? "";
    }
    return NO_FIELD;
  }
}

/** The host without its port (`.Host`). */
export function hostWithoutPort(host: string): string {
  return splitHostPort(host)[0];
}
