/**
 * Logs in the JSON → Gatehousefile direction: a `logging.logs` entry becomes the block of a
 * `log` global option or of a site's `log` directive (`output`, `format`, `level`,
 * `sampling`, and for global logs `include` / `exclude`).
 *
 * @module
 */
import { durationText } from "./duration.ts";
import { Fields, isObject } from "./problems.ts";
import { gline, type Line } from "./tokens.ts";

function writerLine(w: Fields): Line | null {
  const kind = w.str("output");
  switch (kind) {
    case "stdout":
    case "stderr":
    case "discard":
      return gline(["output", kind]);
    case "file": {
      const name = w.str("filename");
      if (name === undefined) {
        w.problems.add(w.path, "a file log writer needs a filename");
        return null;
      }
      const b: Line[] = [];
      const mode = w.take("mode");
      if (mode !== undefined) b.push(gline(["mode", String(mode)]));
      const dirMode = w.str("dir_mode");
      if (dirMode !== undefined) b.push(gline(["dir_mode", dirMode]));
      if (w.bool("roll") === false) b.push(gline(["roll_disabled"]));
      const size = w.num("roll_size_mb");
      if (size !== undefined) b.push(gline(["roll_size", `${size}MiB`]));
      const gz = w.bool("roll_gzip");
      if (gz === false) b.push(gline(["roll_uncompressed"]));
      const comp = w.str("roll_compression");
      if (comp !== undefined) b.push(gline(["roll_compression", comp]));
      if (w.bool("roll_local_time")) b.push(gline(["roll_local_time"]));
      const keep = w.num("roll_keep");
      if (keep !== undefined) b.push(gline(["roll_keep", String(keep)]));
      const days = w.num("roll_keep_days");
      if (days !== undefined) b.push(gline(["roll_keep_for", `${days * 24}h`]));
      return gline(["output", "file", name], b.length ? b : undefined);
    }
    default:
      w.problems.add(w.at("output"), `log writer ${kind} has no Gatehousefile form here`);
      return null;
  }
}

/** Lines of one filtered field (`<field> <filter> ...`); null after a problem. */
function filterLines(name: string, f: Fields): Line[] | null {
  const filter = f.str("filter");
  switch (filter) {
    case "delete":
    case "hash":
      return [gline([name, filter])];
    case "replace":
      return [gline([name, "replace", f.str("value") ?? ""])];
    case "ip_mask": {
      const b: Line[] = [];
      const v4 = f.num("ipv4_cidr");
      if (v4 !== undefined) b.push(gline(["ipv4", String(v4)]));
      const v6 = f.num("ipv6_cidr");
      if (v6 !== undefined) b.push(gline(["ipv6", String(v6)]));
      return [gline([name, "ip_mask"], b)];
    }
    case "regexp":
      return [gline([name, "regexp", f.str("regexp") ?? "", f.str("value") ?? ""])];
    case "multi_regexp": {
      const out: Line[] = [];
      for (const op of f.arr("operations") ?? []) {
        if (!isObject(op) || typeof op.regexp !== "string") {
          f.problems.add(f.at("operations"), "each operation needs a regexp");
          return null;
        }
        out.push(gline([name, "regexp", op.regexp, String(op.value ?? "")]));
      }
      return out;
    }
    case "cookie":
    case "query": {
      const b: Line[] = [];
      const key = filter === "cookie" ? "name" : "parameter";
      for (const a of f.arr("actions") ?? []) {
        if (!isObject(a) || typeof a.type !== "string" || typeof a[key] !== "string") {
          f.problems.add(f.at("actions"), `each action needs a type and a ${key}`);
          return null;
        }
        b.push(
          gline([a.type, a[key] as string, ...(typeof a.value === "string" ? [a.value] : [])]),
        );
      }
      return [gline([name, filter], b)];
    }
  }
  f.problems.add(f.at("filter"), `log field filter ${filter} has no form here`);
  return null;
}

function encoderLine(e: Fields): Line | null {
  const format = e.str("format");
  if (format === "console" || format === "json") {
    return gline(["format", format]);
  }
  if (format === "filter") {
    const b: Line[] = [];
    const wrap = e.fields("wrap");
    if (wrap) {
      const w = wrap.str("format");
      wrap.done("the wrapped log encoder");
      if (w) b.push(gline(["wrap", w]));
    }
    const fields = e.obj("fields");
    if (fields) {
      const fl: Line[] = [];
      for (const [name, cfg] of Object.entries(fields)) {
        if (!isObject(cfg)) {
          e.problems.add(e.at("fields") + "/" + name, "a field filter must be an object");
          return null;
        }
        const ff = new Fields(cfg, e.at("fields") + "/" + name, e.problems);
        const lines = filterLines(name, ff);
        ff.done(`the ${String(cfg.filter)} log filter`);
        if (!lines) return null;
        fl.push(...lines);
      }
      b.push(gline(["fields"], fl));
    }
    return gline(["format", "filter"], b);
  }
  e.problems.add(e.at("format"), `log format ${format} has no Gatehousefile form here`);
  return null;
}

/** What the adapter adds to logs by itself, so it is not written. */
export interface LogImplied {
  /** The `debug` option is written: DEBUG levels are implied. */
  debug?: boolean;
  /** Exclusions the adapter adds to the default log. */
  excludes?: Set<string>;
}

/** The lines inside a `log` block for one custom log; `global` allows include/exclude. */
export function logLines(f: Fields, global: boolean, implied: LogImplied = {}): Line[] {
  const out: Line[] = [];
  const w = f.fields("writer");
  if (w) {
    const l = writerLine(w);
    w.done("the log writer");
    if (l) out.push(l);
  }
  const e = f.fields("encoder");
  if (e) {
    const l = encoderLine(e);
    e.done("the log encoder");
    if (l) out.push(l);
  }
  const level = f.str("level");
  if (level !== undefined && !(implied.debug && level === "DEBUG")) {
    out.push(gline(["level", level]));
  }
  const s = f.fields("sampling");
  if (s) {
    const b: Line[] = [];
    const iv = s.take("interval");
    if (iv !== undefined) b.push(gline(["interval", durationText(iv) ?? String(iv)]));
    const first = s.num("first");
    if (first !== undefined) b.push(gline(["first", String(first)]));
    const th = s.num("thereafter");
    if (th !== undefined) b.push(gline(["thereafter", String(th)]));
    s.done("log sampling");
    out.push(gline(["sampling"], b));
  }
  if (global) {
    const inc = f.strs("include");
    if (inc) out.push(gline(["include", ...inc]));
    const exc = f.strs("exclude")?.filter((x) => !implied.excludes?.has(x));
    if (exc?.length) out.push(gline(["exclude", ...exc]));
  }
  return out;
}
