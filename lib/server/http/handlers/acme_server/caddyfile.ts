/**
 * Gatehousefile syntax of the `acme_server` handler (an ACME CA endpoint backed by the
 * `pki` app): `acme_server [<matcher>] { ca <id>; lifetime <d>; resolvers <addrs...>;
 * challenges <types...>; allow_wildcard_names; allow|deny { domains ...; ip_ranges ... };
 * sign_with_root }`. Naming a CA also adds it to the `pki` app.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { ConfigValue } from "../../../caddyfile/types.ts";
import { parseDuration } from "../../../config/duration.ts";
import type { ACMEServerConfig } from "./config.ts";
import type { PolicyConfig, RuleSetConfig } from "./policy.ts";

/** `acme_server`. */
export function parseACMEServer(h: Helper): ConfigValue[] {
  h.next();
  const matcher = h.extractMatcherSet();
  h.next();
  if (h.nextArg()) throw h.argErr();
  const srv: ACMEServerConfig = { handler: "acme_server" };
  let caID: string | undefined;
  const policy = (): PolicyConfig => (srv.policy ??= {});
  for (const n = h.nesting(); h.nextBlock(n);) {
    const k = h.val();
    switch (k) {
      case "ca": {
        const a = h.allArgs(1);
        if (!a) throw h.argErr();
        if (a[0] !== "") srv.ca = a[0];
        caID = a[0];
        break;
      }
      case "lifetime": {
        if (!h.nextArg()) throw h.argErr();
        const v = parseDuration(h.val());
        if (v !== 0) srv.lifetime = v;
        break;
      }
      case "resolvers": {
        const r = h.remainingArgs();
        if (r.length === 0) throw h.err("must specify at least one resolver address");
        srv.resolvers = r;
        break;
      }
      case "challenges": {
        const c = [...(srv.challenges ?? []), ...h.remainingArgs()];
        if (c.length > 0) srv.challenges = c;
        break;
      }
      case "allow_wildcard_names":
        policy().allow_wildcard_names = true;
        break;
      case "allow":
      case "deny": {
        const r: RuleSetConfig = {};
        for (const m = h.nesting(); h.nextBlock(m);) {
          if (h.countRemainingArgs() === 0) throw h.argErr();
          const f = h.val();
          if (f !== "domains" && f !== "ip_ranges") {
            throw h.unknownSubdirective(
              ["domains", "ip_ranges"],
              `unrecognized '${k}' subdirective: %s`,
            );
          }
          r[f] = [...(r[f] ?? []), ...h.remainingArgs()];
        }
        policy()[k as "allow" | "deny"] = r;
        break;
      }
      case "sign_with_root":
        if (h.nextArg()) throw h.argErr();
        srv.sign_with_root = true;
        break;
      default:
        throw h.unknownSubdirective(
          [
            "ca",
            "lifetime",
            "resolvers",
            "challenges",
            "allow_wildcard_names",
            "allow",
            "deny",
            "sign_with_root",
          ],
          "unrecognized ACME server directive: %s",
        );
    }
  }
  const vals = h.newRoute(matcher, srv);
  if (caID !== undefined) vals.push({ class: "pki.ca", value: { id: caID, ca: {} } });
  return vals;
}

/** The Gatehousefile syntax of `acme_server`. */
export const syntax: SyntaxSet = { directives: { acme_server: parseACMEServer } };
