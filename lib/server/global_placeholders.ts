/**
 * The global placeholders, known everywhere and not tied to a request (Caddy's
 * `globalDefaultReplacements`): `{system.hostname}`, `{system.slash}`, `{system.os}`,
 * `{system.arch}`, `{system.wd}`, `{time.now}`, `{time.now.http}`, `{time.now.common_log}`,
 * `{time.now.year}`, `{time.now.unix}`, `{time.now.unix_ms}` and `{env.NAME}`. The http
 * replacer (`http/replacer.ts`) serves them beside the request's; the log encoders outside
 * requests read them here.
 *
 * @module
 */

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function zone(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? "+" : "-";
  return `${sign}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
}

/**
 * `02/Jan/2006:15:04:05 -0700` (common log format).
 *
 * @example
 * ```ts
 * import { commonLogTime } from "./global_placeholders.ts";
 * commonLogTime(new Date(2024, 0, 2, 3, 4, 5)); // "02/Jan/2024:03:04:05 +0000" in UTC
 * ```
 */
export function commonLogTime(d: Date): string {
  return `${pad(d.getDate())}/${MONTHS[d.getMonth()]}/${d.getFullYear()}:${pad(d.getHours())}:${
    pad(d.getMinutes())
  }:${pad(d.getSeconds())} ${zone(d)}`;
}

function env(name: string): string {
  try {
    return Deno.env.get(name) ?? "";
  } catch {
    return "";
  }
}

const FIXED: Record<string, () => string> = {
  "system.hostname": () => {
    try {
      return Deno.hostname();
    } catch {
      return "";
    }
  },
  "system.slash": () => "/",
  "system.os": () => Deno.build.os,
  "system.arch": () => Deno.build.arch === "x86_64" ? "amd64" : Deno.build.arch,
  "system.wd": () => Deno.cwd(),
  "time.now": () => new Date().toString(),
  "time.now.http": () => new Date().toUTCString(),
  "time.now.common_log": () => commonLogTime(new Date()),
  "time.now.year": () => String(new Date().getFullYear()),
  "time.now.unix": () => String(Math.floor(Date.now() / 1000)),
  "time.now.unix_ms": () => String(Date.now()),
};

/**
 * The getter of a global placeholder (`key` without braces), or undefined when `key` is not
 * one.
 *
 * @example
 * ```ts
 * import { globalPlaceholder } from "./global_placeholders.ts";
 * globalPlaceholder("system.slash")?.(); // "/"
 * globalPlaceholder("http.request.host"); // undefined
 * ```
 */
export function globalPlaceholder(key: string): (() => string) | undefined {
  if (Object.hasOwn(FIXED, key)) return FIXED[key];
  if (key.startsWith("env.")) {
    const name = key.slice("env.".length);
    return () => env(name);
  }
  return undefined;
}
