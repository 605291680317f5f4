/**
 * Gatehousefile syntax of the wrapping log encoders — `filter` (per-field filters: `delete`,
 * `hash`, `replace`, `ip_mask`, `query`, `cookie`, `set_cookie`, `regexp`, `rename`; several
 * `regexp` filters on one field merge into `multi_regexp`), `append` (extra fields) and
 * `journald` — and of the field filters.
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import { type SyntaxSet, unmarshalModule } from "../caddyfile/registry.ts";

type Obj = Record<string, unknown>;

function wrap(d: Dispenser): Obj {
  if (!d.nextArg()) throw d.argErr();
  const name = d.val();
  const enc = unmarshalModule(d, `caddy.logging.encoders.${name}`) as Obj;
  return { ...enc, format: name };
}

/** `format filter { wrap <encoder>; [fields {] <field> <filter> ... [}] }`. */
export function filterEncoder(d: Dispenser): Obj {
  d.next();
  const out: Obj = {};
  const fields: Record<string, unknown> = {};
  const regexps = new Map<string, Obj[]>();
  const field = () => {
    const name = d.val();
    if (!d.nextArg()) throw d.argErr();
    const filterName = d.val();
    const f = unmarshalModule(d, `caddy.logging.encoders.filter.${filterName}`) as Obj;
    if (filterName === "regexp") {
      regexps.set(name, [...(regexps.get(name) ?? []), f]);
      return;
    }
    if (regexps.has(name)) {
      throw d.err(`cannot mix regexp filters with other filter types for field ${name}`);
    }
    if (name in fields) {
      throw d.err(
        `field ${name} already has a filter; multiple non-regexp filters per field are not supported`,
      );
    }
    fields[name] = { ...f, filter: filterName };
  };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() === "wrap") out.wrap = wrap(d);
    else if (d.val() === "fields") {
      for (const m = d.nesting(); d.nextBlock(m);) field();
    } else field();
  }
  for (const [name, list] of regexps) {
    if (list.length === 1) fields[name] = { ...list[0], filter: "regexp" };
    else {
      const operations = list.map((f) => {
        if (!f.regexp) {
          throw new Error(
            `adding regexp operation for field ${name}: regexp pattern cannot be empty`,
          );
        }
        return f.value !== undefined ? { regexp: f.regexp, value: f.value } : { regexp: f.regexp };
      });
      if (operations.length > 50) {
        throw new Error(
          `adding regexp operation for field ${name}: cannot add operation: maximum 50 operations allowed`,
        );
      }
      fields[name] = { operations, filter: "multi_regexp" };
    }
  }
  if (Object.keys(fields).length > 0) out.fields = fields;
  return out;
}

/** `format append { wrap <encoder>; [fields {] <field> <value> ... [}] }`. */
export function appendEncoder(d: Dispenser): Obj {
  d.next();
  const out: Obj = {};
  const fields: Record<string, unknown> = {};
  const field = () => {
    const name = d.val();
    if (!d.nextArg()) throw d.argErr();
    fields[name] = d.scalarVal();
    if (d.nextArg()) throw d.argErr();
  };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() === "wrap") out.wrap = wrap(d);
    else if (d.val() === "fields") {
      for (const m = d.nesting(); d.nextBlock(m);) field();
    } else field();
  }
  if (Object.keys(fields).length > 0) out.fields = fields;
  return out;
}

/** `format journald { wrap <encoder> }`. */
export function journaldEncoder(d: Dispenser): Obj {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const out: Obj = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "wrap") throw d.unknownSubdirective(["wrap"]);
    out.wrap = wrap(d);
  }
  return out;
}

function int(d: Dispenser, s: string): number {
  if (!/^[+-]?\d+$/.test(s)) {
    throw d.err(`error parsing ${s}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  return Number(s);
}

function actions(key: "parameter" | "name") {
  return (d: Dispenser): Obj => {
    d.next();
    const list: Obj[] = [];
    for (const n = d.nesting(); d.nextBlock(n);) {
      const type = d.val();
      if (!["replace", "hash", "delete"].includes(type)) {
        throw d.unknownSubdirective(["replace", "hash", "delete"]);
      }
      if (!d.nextArg()) throw d.argErr();
      const a: Obj = { type, [key]: d.val() };
      if (type === "replace") {
        if (!d.nextArg()) throw d.argErr();
        if (d.val() !== "") a.value = d.val();
      }
      list.push(a);
    }
    return { actions: list.length ? list : null };
  };
}

/** The Gatehousefile syntax of the wrapping encoders and the field filters. */
export const syntax: SyntaxSet = {
  modules: {
    "caddy.logging.encoders.filter": filterEncoder,
    "caddy.logging.encoders.append": appendEncoder,
    "caddy.logging.encoders.journald": journaldEncoder,
    "caddy.logging.encoders.filter.delete": () => ({}),
    "caddy.logging.encoders.filter.hash": () => ({}),
    "caddy.logging.encoders.filter.replace": (d) => {
      d.next();
      return d.nextArg() && d.val() !== "" ? { value: d.val() } : {};
    },
    "caddy.logging.encoders.filter.rename": (d) => {
      d.next();
      return d.nextArg() && d.val() !== "" ? { name: d.val() } : {};
    },
    "caddy.logging.encoders.filter.regexp": (d) => {
      d.next();
      const out: Obj = {};
      if (d.nextArg() && d.val() !== "") out.regexp = d.val();
      if (d.nextArg() && d.val() !== "") out.value = d.val();
      return out;
    },
    "caddy.logging.encoders.filter.ip_mask": (d) => {
      d.next();
      const out: Obj = {};
      const args = d.remainingArgs();
      if (args.length > 2) throw d.err("too many arguments");
      const put = (k: string, v: number) => (v !== 0 ? (out[k] = v) : delete out[k]);
      if (args.length > 0) put("ipv4_cidr", int(d, args[0]));
      if (args.length > 1) put("ipv6_cidr", int(d, args[1]));
      for (const n = d.nesting(); d.nextBlock(n);) {
        const k = d.val();
        if (k !== "ipv4" && k !== "ipv6") throw d.unknownSubdirective(["ipv4", "ipv6"]);
        if (!d.nextArg()) throw d.argErr();
        put(`${k}_cidr`, int(d, d.val()));
      }
      return out;
    },
    "caddy.logging.encoders.filter.query": actions("parameter"),
    "caddy.logging.encoders.filter.cookie": actions("name"),
    "caddy.logging.encoders.filter.set_cookie": actions("name"),
    "caddy.logging.encoders.filter.multi_regexp": (d) => {
      d.next();
      const operations: Obj[] = [];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() !== "regexp") throw d.unknownSubdirective(["regexp"]);
        if (operations.length >= 50) {
          throw d.err("too many regexp operations (maximum 50 allowed)");
        }
        if (!d.nextArg()) throw d.argErr();
        const re = d.val();
        if (re.length > 1000) throw d.err("regexp pattern too long (maximum 1000 characters)");
        if (re === "") throw d.err("regexp pattern cannot be empty");
        if (!d.nextArg()) throw d.argErr();
        operations.push(d.val() !== "" ? { regexp: re, value: d.val() } : { regexp: re });
      }
      if (operations.length === 0) {
        throw d.err("multi_regexp filter requires at least one regexp operation");
      }
      return { operations };
    },
  },
};
