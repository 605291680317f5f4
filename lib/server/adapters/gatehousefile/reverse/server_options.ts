/**
 * Server fields → the `servers [<listener>] { ... }` global option (timeouts, protocols,
 * trusted proxies, header limits, a custom server name...). Fields the adapter fills from
 * site directives (routes, listen, logs, TLS policies) are read elsewhere.
 *
 * @module
 */
import { durationText } from "../../../config/duration.ts";
import type { Fields } from "../../../caddyfile/writer/problems.ts";
import { gline, type Line } from "../../../caddyfile/writer/tokens.ts";
import { isObject } from "../../../caddyfile/writer/problems.ts";

const TIMEOUTS: [string, string][] = [
  ["read_timeout", "read_body"],
  ["read_header_timeout", "read_header"],
  ["write_timeout", "write"],
  ["idle_timeout", "idle"],
];

/** Lines of a `servers` option for one server's remaining fields (empty: nothing to write). */
export function serverOptionLines(f: Fields, name: string, defaultName: boolean): Line[] {
  const out: Line[] = [];
  if (!defaultName) out.push(gline(["name", name]));
  const timeouts: Line[] = [];
  for (const [field, sub] of TIMEOUTS) {
    if (!f.has(field)) continue;
    const d = durationText(f.take(field));
    if (d === undefined) f.problems.add(f.at(field), "must be a duration");
    else timeouts.push(gline([sub, d]));
  }
  if (timeouts.length) out.push(gline(["timeouts"], timeouts));
  for (
    const [field, opt] of [["keepalive_interval", "keepalive_interval"], [
      "keepalive_idle",
      "keepalive_idle",
    ]] as const
  ) {
    if (!f.has(field)) continue;
    const d = durationText(f.take(field));
    if (d === undefined) f.problems.add(f.at(field), "must be a duration");
    else out.push(gline([opt, d]));
  }
  const count = f.num("keepalive_count");
  if (count !== undefined) out.push(gline(["keepalive_count", String(count)]));
  const mhb = f.num("max_header_bytes");
  if (mhb !== undefined) out.push(gline(["max_header_size", String(mhb)]));
  if (f.bool("enable_full_duplex")) out.push(gline(["enable_full_duplex"]));
  const protocols = f.strs("protocols");
  if (protocols) out.push(gline(["protocols", ...protocols]));
  const strict = f.bool("strict_sni_host");
  if (strict !== undefined) out.push(gline(["strict_sni_host", strict ? "on" : "insecure_off"]));
  const tp = f.obj("trusted_proxies");
  if (tp) {
    if (tp.source === "static" && Array.isArray(tp.ranges) && Object.keys(tp).length === 2) {
      out.push(gline(["trusted_proxies", "static", ...tp.ranges.map(String)]));
    } else f.problems.add(f.at("trusted_proxies"), "only static trusted proxy ranges have a form");
  }
  if (f.num("trusted_proxies_strict") === 1) out.push(gline(["trusted_proxies_strict"]));
  if (f.bool("trusted_proxies_unix")) out.push(gline(["trusted_proxies_unix"]));
  const cih = f.strs("client_ip_headers");
  if (cih) out.push(gline(["client_ip_headers", ...cih]));
  const logs = f.value.logs;
  if (isObject(logs) && logs.should_log_credentials === true) out.push(gline(["log_credentials"]));
  const a0 = f.bool("allow_0rtt");
  if (a0 === false) out.push(gline(["0rtt", "off"]));
  const wrappers = f.arr("listener_wrappers");
  if (wrappers) {
    const lines: Line[] = [];
    for (const w of wrappers) {
      if (isObject(w) && Object.keys(w).length === 1 && typeof w.wrapper === "string") {
        lines.push(gline([w.wrapper]));
      } else {
        f.problems.add(
          f.at("listener_wrappers"),
          "only listener wrappers without options have a form",
        );
      }
    }
    out.push(gline(["listener_wrappers"], lines));
  }
  return out;
}
