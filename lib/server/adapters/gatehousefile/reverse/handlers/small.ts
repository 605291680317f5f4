/**
 * Handlers with a short directive: `templates`, `request_body`, `authentication`
 * (`basic_auth`), `invoke`, `copy_response`, `copy_response_headers`, `log_append`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { isObject } from "../../../../caddyfile/writer/problems.ts";
import { type Line, line, statusText, word } from "../../../../caddyfile/writer/tokens.ts";

/** `templates`. */
export const templates: HandlerReverser = (f) => {
  const block: Line[] = [];
  const mime = f.strs("mime_types");
  if (mime) block.push(line(["mime", ...mime]));
  const delims = f.strs("delimiters");
  if (delims) block.push(line(["between", ...delims]));
  const root = f.str("file_root");
  if (root !== undefined) block.push(line(["root", root]));
  return { name: "templates", args: [], block: block.length ? block : undefined };
};

/** `authentication` with the `http_basic` provider → `basic_auth`. */
export const authentication: HandlerReverser = (f) => {
  const providers = f.fields("providers");
  if (!providers) return { name: "basic_auth", args: [] };
  const basic = providers.fields("http_basic");
  providers.done("authentication providers");
  if (!basic) {
    f.problems.add(providers.path, "only the http_basic provider has a Gatehousefile form");
    return null;
  }
  const hash = basic.obj("hash");
  const algorithm = isObject(hash) ? hash.algorithm : undefined;
  if (typeof algorithm !== "string" || Object.keys(hash!).length !== 1) {
    basic.problems.add(basic.at("hash"), "only a hash algorithm without options has a form");
    return null;
  }
  const cache = basic.obj("hash_cache");
  if (!cache || Object.keys(cache).length) {
    basic.problems.add(basic.at("hash_cache"), "basic_auth always enables an empty hash cache");
    return null;
  }
  const realm = basic.str("realm");
  const block: Line[] = [];
  for (const a of basic.arr("accounts") ?? []) {
    if (!isObject(a) || typeof a.username !== "string" || typeof a.password !== "string") {
      basic.problems.add(basic.at("accounts"), "an account needs username and password");
      return null;
    }
    block.push(line([a.username, a.password]));
  }
  basic.done("the http_basic provider");
  const args = realm !== undefined ? [word(algorithm), word(realm)] : [word(algorithm)];
  return { name: "basic_auth", args, block: block.length ? block : undefined };
};

/** `copy_response`. */
export const copyResponse: HandlerReverser = (f) => {
  const status = statusText(f.take("status_code"));
  return { name: "copy_response", args: status !== undefined ? [word(status)] : [] };
};

/** `copy_response_headers`. */
export const copyResponseHeaders: HandlerReverser = (f) => {
  const block: Line[] = [];
  for (const h of f.strs("include") ?? []) block.push(line(["include", h]));
  for (const h of f.strs("exclude") ?? []) block.push(line(["exclude", h]));
  return { name: "copy_response_headers", args: [], block: block.length ? block : undefined };
};
