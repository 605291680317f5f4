/**
 * Gatehousefile syntax of the `authentication` handler's HTTP basic provider:
 * `basic_auth [<matcher>] [bcrypt|argon2id [<realm>]] { <username> <hashed_password> ... }`
 * (`basicauth` is the old name).
 *
 * @module
 */
import { didYouMean } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { AccountConfig, AuthenticationConfig, HTTPBasicConfig } from "./config.ts";

/** `basic_auth`. */
export function parseBasicAuth(h: Helper): AuthenticationConfig {
  h.next();
  if (h.val() === "basicauth") {
    h.warn("the 'basicauth' directive is deprecated, please use 'basic_auth' instead!");
  }
  const args = h.remainingArgs();
  if (args.length > 2) throw h.argErr();
  const hash = args[0] ?? "bcrypt";
  const basic: HTTPBasicConfig = { hash_cache: {} };
  if (args[1]) basic.realm = args[1];
  if (hash !== "bcrypt" && hash !== "argon2id") {
    throw h.err(`unrecognized hash algorithm: ${hash}${didYouMean(hash, ["bcrypt", "argon2id"])}`);
  }
  basic.hash = { algorithm: hash };
  const accounts: AccountConfig[] = [];
  for (const n = h.nesting(); h.nextBlock(n);) {
    const username = h.val();
    const pw = h.args(1)?.[0] ?? "";
    if (h.nextArg()) throw h.argErr();
    if (username === "" || pw === "") {
      throw h.err("username and password cannot be empty or missing");
    }
    accounts.push({ username, password: pw });
  }
  if (accounts.length > 0) basic.accounts = accounts;
  return { handler: "authentication", providers: { http_basic: basic } };
}

/** The Gatehousefile syntax of `authentication`. */
export const syntax: SyntaxSet = {
  handlerDirectives: { basicauth: parseBasicAuth, basic_auth: parseBasicAuth },
};
