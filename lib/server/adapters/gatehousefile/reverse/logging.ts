/**
 * Logs in the JSON → Gatehousefile direction: a `logging.logs` entry becomes the block of a
 * `log` global option or of a site's `log` directive (`output`, `format`, `level`,
 * `sampling`, and for global logs `include` / `exclude`).
 *
 * @module
 */
import { durationText } from "../../../config/duration.ts";
import type { Fields } from "../../../caddyfile/writer/problems.ts";
import { encoderLine } from "./log_encoders.ts";
import { gline, type Line } from "../../../caddyfile/writer/tokens.ts";

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
      if (w.has("roll_interval")) {
        const d = durationText(w.take("roll_interval"));
        if (d === undefined) w.problems.add(w.at("roll_interval"), "must be a duration");
        else b.push(gline(["roll_interval", d]));
      }
      const at = w.strs("roll_at");
      if (at?.length) b.push(gline(["roll_at", ...at]));
      const minutes = w.arr("roll_minutes");
      if (minutes?.length) {
        if (minutes.every((m) => Number.isInteger(m))) {
          b.push(gline(["roll_minutes", ...minutes.map(String)]));
        } else w.problems.add(w.at("roll_minutes"), "expected whole minutes");
      }
      const btf = w.str("backup_time_format");
      if (btf !== undefined) b.push(gline(["backup_time_format", btf]));
      return gline(["output", "file", name], b.length ? b : undefined);
    }
    case "net": {
      const address = w.str("address");
      if (address === undefined) {
        w.problems.add(w.path, "a net log writer needs an address");
        return null;
      }
      const b: Line[] = [];
      if (w.has("dial_timeout")) {
        const d = durationText(w.take("dial_timeout"));
        if (d === undefined) w.problems.add(w.at("dial_timeout"), "must be a duration");
        else b.push(gline(["dial_timeout", d]));
      }
      if (w.bool("soft_start")) b.push(gline(["soft_start"]));
      return gline(["output", "net", address], b.length ? b : undefined);
    }
    default:
      w.problems.add(
        w.has("output") ? w.at("output") : w.path,
        `log writer ${kind} has no Gatehousefile form here`,
      );
      return null;
  }
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
