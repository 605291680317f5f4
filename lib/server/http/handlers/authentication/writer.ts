/**
 * `authentication` handler with the `http_basic` provider → `basic_auth [<algorithm> [<realm>]] { <username> <hash> ... }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import type { AuthenticationConfig, HTTPBasicConfig } from "./config.ts";

/** `authentication` with the `http_basic` provider → `basic_auth`. */
export const writer: HandlerReverser<AuthenticationConfig> = (f) => {
  const providers = f.fields<NonNullable<AuthenticationConfig["providers"]>>("providers");
  if (!providers) return { name: "basic_auth", args: [] };
  const basic = providers.fields<HTTPBasicConfig>("http_basic");
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
