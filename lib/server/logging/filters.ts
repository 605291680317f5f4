/**
 * Log field filters (`caddy.logging.encoders.filter.*`), what the `filter` encoder applies to
 * the fields it is told about, as Caddy does: `delete`, `rename` (`name`), `replace`
 * (`value`), `hash` (first 4 bytes of SHA-256, hex), `ip_mask` (`ipv4_cidr`, `ipv6_cidr`; a
 * comma-separated list of addresses, ports kept), `query` and `cookie` (`actions` of type
 * `replace`/`hash`/`delete`), `set_cookie`, `regexp` (`regexp`, `value` with `${1}`) and
 * `multi_regexp` (`operations`). Filters that work on text change strings and lists of
 * strings; other values pass unchanged.
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import { sha256Hex } from "../pki/sha256.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { isV4, parseIP } from "../net/ip.ts";
import { formatIPv6 } from "../caddyfile/netaddr.ts";
import { goRegExp, goReplacement } from "../config/regexp.ts";
import { Decoder, type Raw } from "../config/decode.ts";

/** A filter's verdict on one field: its new key and value, or null to drop it. */
export type Filtered = { key: string; value: unknown } | null;

/** A log field filter module. */
export interface LogFieldFilter extends ModuleInstance {
  /** Filters one field. */
  filter(key: string, value: unknown): Filtered;
}

/** Applies `fn` to a string or to every string of a list; other values are kept. */
function onText(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.map(fn);
  return value;
}

/** Caddy's hash: the first 4 bytes of the SHA-256 of the value, in hex. */
export function logHash(s: string): string {
  return sha256Hex(new TextEncoder().encode(s)).slice(0, 8);
}

/** Go's IP string form: dotted IPv4, RFC 5952 IPv6 (longest zero run of 2+ compressed). */
export function formatIP(ip: bigint): string {
  if (isV4(ip)) {
    const n = Number(ip & 0xffffffffn);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip >> BigInt(i * 16)) & 0xffffn));
  return formatIPv6(groups);
}

function splitHostPortStrict(s: string): [string, string] | null {
  if (s.startsWith("[")) {
    const end = s.indexOf("]:");
    return end < 0 ? null : [s.slice(1, end), s.slice(end + 2)];
  }
  const i = s.lastIndexOf(":");
  if (i < 0 || s.indexOf(":") !== i) return null;
  return [s.slice(0, i), s.slice(i + 1)];
}

function ipMaskFilter(config: Record<string, unknown>): LogFieldFilter {
  const d = new Decoder(config, "caddy.logging.encoders.filter.ip_mask").fields([
    "ipv4_cidr",
    "ipv6_cidr",
  ]);
  const v4 = d.number("ipv4_cidr") ?? 0;
  const v6 = d.number("ipv6_cidr") ?? 0;
  if (v4 < 0 || v4 > 32 || v6 < 0 || v6 > 128) {
    d.fail("ipv4_cidr must be 0-32 and ipv6_cidr 0-128");
  }
  const maskOf = (bits: number, width: number) =>
    ((1n << BigInt(bits)) - 1n) << BigInt(width - bits);
  const mask = (s: string) =>
    s.split(",").map((part) => {
      const value = part.trim();
      const hp = splitHostPortStrict(value);
      const host = hp ? hp[0] : value;
      const ip = parseIP(host);
      if (ip === null || host.includes("%")) return value;
      const v4addr = isV4(ip);
      const bits = v4addr ? v4 : v6;
      // Go: a mask of 0 bits is no mask at all, and masking with it gives a nil IP
      let out = "<nil>";
      if (bits > 0) {
        out = v4addr
          ? formatIP((0xffffn << 32n) | ((ip & 0xffffffffn) & maskOf(bits, 32)))
          : formatIP(ip & maskOf(bits, 128));
      }
      if (!hp) return out;
      return out.includes(":") ? `[${out}]:${hp[1]}` : `${out}:${hp[1]}`;
    }).join(", ");
  return { filter: (key, value) => ({ key, value: onText(value, mask) }) };
}

type Action = { type: "replace" | "hash" | "delete"; name: string; value: string };

function parseActions(config: Raw, where: string, nameKey: string): Action[] {
  const d: Decoder = new Decoder(config, where).fields(["actions"]);
  const raw = d.value("actions") ?? [];
  if (!Array.isArray(raw)) d.fail(`"actions" must be an array`);
  return raw.map((a, i) => {
    const o = (a ?? {}) as Raw;
    const action: Decoder = new Decoder(o, `${where}.actions[${i}]`).fields([
      "type",
      nameKey,
      "value",
    ]);
    const type = o.type;
    if (type !== "replace" && type !== "hash" && type !== "delete") {
      action.fail(`invalid action type ${JSON.stringify(type)}`);
    }
    // a value of the wrong type is reported at the filter
    const values = new Decoder(o, where);
    return { type, name: values.string(nameKey) ?? "", value: values.string("value") ?? "" };
  });
}

/** Go's `url.QueryEscape`. */
function queryEscape(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  )
    .replace(/%20/g, "+");
}

function queryFilter(config: Record<string, unknown>): LogFieldFilter {
  const actions = parseActions(config, "caddy.logging.encoders.filter.query", "parameter");
  const apply = (s: string): string => {
    const hashAt = s.indexOf("#");
    const beforeFrag = hashAt < 0 ? s : s.slice(0, hashAt);
    const frag = hashAt < 0 ? "" : s.slice(hashAt);
    const q = beforeFrag.indexOf("?");
    const base = q < 0 ? beforeFrag : beforeFrag.slice(0, q);
    const values = new Map<string, string[]>();
    try {
      for (const [k, v] of new URLSearchParams(q < 0 ? "" : beforeFrag.slice(q + 1))) {
        const list = values.get(k) ?? [];
        list.push(v);
        values.set(k, list);
      }
    } catch {
      return s;
    }
    for (const a of actions) {
      const list = values.get(a.name);
      if (a.type === "delete") values.delete(a.name);
      else if (list) values.set(a.name, list.map((v) => a.type === "hash" ? logHash(v) : a.value));
    }
    const query = [...values.keys()].sort().flatMap((k) =>
      values.get(k)!.map((v) => `${queryEscape(k)}=${queryEscape(v)}`)
    ).join("&");
    return (query ? `${base}?${query}` : base) + frag;
  };
  return { filter: (key, value) => ({ key, value: onText(value, apply) }) };
}

/** A filter of header values (a list of strings); any other value passes unchanged. */
function onHeaderLines(fn: (lines: string[]) => string[]): LogFieldFilter {
  return {
    filter(key, value) {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
        return { key, value };
      }
      return { key, value: fn(value as string[]) };
    },
  };
}

/** Go's cookie value quoting: a value with a space or comma goes in double quotes. */
function cookieValue(v: string): string {
  return /[ ,]/.test(v) ? `"${v}"` : v;
}

function cookieFilter(config: Record<string, unknown>): LogFieldFilter {
  const actions = parseActions(config, "caddy.logging.encoders.filter.cookie", "name");
  return onHeaderLines((lines) => {
    const out: string[] = [];
    for (const line of lines) {
      for (const part of line.split(";")) {
        const eq = part.indexOf("=");
        if (eq < 0) continue;
        const name = part.slice(0, eq).trim();
        let v = part.slice(eq + 1).trim();
        if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) continue;
        if (v.length > 1 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
        const a = actions.find((x) => x.name === name);
        if (a?.type === "delete") continue;
        if (a?.type === "replace") v = a.value;
        else if (a?.type === "hash") v = logHash(v);
        out.push(`${name}=${cookieValue(v)}`);
      }
    }
    return out.length ? [out.join("; ")] : [];
  });
}

function setCookieFilter(config: Record<string, unknown>): LogFieldFilter {
  const actions = parseActions(config, "caddy.logging.encoders.filter.set_cookie", "name");
  return onHeaderLines((lines) => {
    const out: string[] = [];
    for (const line of lines) {
      const headEnd = line.indexOf(";") < 0 ? line.length : line.indexOf(";");
      const eq = line.slice(0, headEnd).indexOf("=");
      const name = eq < 0 ? "" : line.slice(0, eq).trim();
      const a = actions.find((x) => x.name === name);
      if (eq < 0 || !a) {
        out.push(line);
        continue;
      }
      if (a.type === "delete") continue;
      const raw = line.slice(eq + 1, headEnd);
      const trimmed = raw.trim();
      const quoted = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"');
      const plain = quoted ? trimmed.slice(1, -1) : trimmed;
      const next = a.type === "hash" ? logHash(plain) : a.value;
      const lead = raw.length - raw.trimStart().length;
      const trail = raw.length - raw.trimEnd().length;
      out.push(
        line.slice(0, eq + 1) + raw.slice(0, lead) + (quoted ? `"${next}"` : next) +
          raw.slice(raw.length - trail) + line.slice(headEnd),
      );
    }
    return out;
  });
}

function regexpOp(pattern: string, value: string): (s: string) => string {
  const re = goRegExp(pattern, "g");
  const to = goReplacement(value);
  return (s) => s.replace(re, to);
}

const FILTERS: Record<string, (config: Raw) => LogFieldFilter> = {
  delete(config) {
    new Decoder(config, "caddy.logging.encoders.filter.delete").fields([]);
    return { filter: () => null };
  },
  rename(config) {
    const d = new Decoder(config, "caddy.logging.encoders.filter.rename").fields(["name"]);
    const name = d.string("name") ?? "";
    return { filter: (_key, value) => ({ key: name, value }) };
  },
  replace(config) {
    const d = new Decoder(config, "caddy.logging.encoders.filter.replace").fields(["value"]);
    const v = d.string("value") ?? "";
    return { filter: (key) => ({ key, value: v }) };
  },
  hash(config) {
    new Decoder(config, "caddy.logging.encoders.filter.hash").fields([]);
    return { filter: (key, value) => ({ key, value: onText(value, logHash) }) };
  },
  ip_mask: ipMaskFilter,
  query: queryFilter,
  cookie: cookieFilter,
  set_cookie: setCookieFilter,
  regexp(config) {
    const d = new Decoder(config, "caddy.logging.encoders.filter.regexp").fields([
      "regexp",
      "value",
    ]);
    const op = regexpOp(d.string("regexp") ?? "", d.string("value") ?? "");
    return { filter: (key, value) => ({ key, value: onText(value, op) }) };
  },
  multi_regexp(config) {
    const d: Decoder = new Decoder(config, "caddy.logging.encoders.filter.multi_regexp").fields([
      "operations",
    ]);
    const list = d.value("operations");
    if (!Array.isArray(list) || list.length === 0 || list.length > 50) {
      d.fail(`"operations" must list 1 to 50 regexp operations`);
    }
    const ops = list.map((o, i) => {
      const op = new Decoder((o ?? {}) as Raw, `${d.at("operations")}[${i}]`).fields([
        "regexp",
        "value",
      ]);
      const pattern = op.string("regexp") ?? "";
      if (pattern === "" || pattern.length > 1000) op.fail("regexp must be 1 to 1000 characters");
      return regexpOp(pattern, op.string("value") ?? "");
    });
    const all = (s: string) => ops.reduce((acc, op) => op(acc), s);
    return { filter: (key, value) => ({ key, value: onText(value, all) }) };
  },
};

/** The filter modules, by name. */
export const FILTER_MODULES: Record<string, ModuleDefinition<LogFieldFilter>> = Object.fromEntries(
  Object.entries(FILTERS).map(([name, make]) => [name, {
    id: `caddy.logging.encoders.filter.${name}`,
    create: (c: Raw) => make(c),
  }]),
);
