/**
 * Certificate issuers in the JSON → Gatehousefile direction: `internal`, `acme` (with its
 * DNS challenge settings, EAB, timings, trusted roots) and the other issuer modules, as the
 * `issuer` lines of a site's `tls` block, the `cert_issuer` global option, or the `tls`
 * directive's argument (`internal`, an email for the implicit ACME issuers).
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { durationText } from "../../../config/duration.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";

/** The issuers of `tls internal` / `local_certs`, as stable JSON. */
export const INTERNAL = JSON.stringify([{ module: "internal" }]);
const ZEROSSL = "https://acme.zerossl.com/v2/DV90";

/** The email of the implicit issuers `email` or `tls <email>` make (ACME, then ZeroSSL). */
export function implicitEmail(issuers: unknown): string | undefined {
  if (!Array.isArray(issuers) || issuers.length !== 2) return undefined;
  const [a, z] = issuers;
  if (!isObject(a) || !isObject(z) || typeof a.email !== "string") return undefined;
  if (stable(a) !== stable({ email: a.email, module: "acme" })) return undefined;
  if (stable(z) !== stable({ ca: ZEROSSL, email: a.email, module: "acme" })) return undefined;
  return a.email;
}

/** JSON with object keys sorted (equal for deep-equal values). */
export function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (isObject(v)) {
    return `{${
      Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(",")
    }}`;
  }
  return JSON.stringify(v);
}

function dur(f: Fields, key: string, sub: string, out: Line[]): void {
  if (!f.has(key)) return;
  const v = f.take(key);
  const d = v === -1 ? "-1" : durationText(v);
  if (d === undefined) f.problems.add(f.at(key), "must be a duration");
  else out.push(line([sub, d]));
}

/** DNS challenge settings (`dns <provider>`, timings, resolvers, override domain). */
function dnsLines(dns: Fields, b: Line[], ctx: Ctx): void {
  const prov = dns.obj("provider");
  if (prov) {
    const { name, ...args } = prov;
    const keys = Object.keys(args);
    if (typeof name === "string" && (keys.length === 0 || keys.join() === "argument")) {
      b.push(line(["dns", name, ...(keys.length ? [String(args.argument)] : [])]));
    } else {
      ctx.problems.add(
        dns.at("provider"),
        `options of DNS provider ${String(name)} have no form here`,
      );
    }
  } else if (dns.path.endsWith("/dns")) {
    // no provider of its own: the globally configured one is used
    b.push(line(["dns"]));
  }
  dur(dns, "ttl", "dns_ttl", b);
  dur(dns, "propagation_delay", "propagation_delay", b);
  dur(dns, "propagation_timeout", "propagation_timeout", b);
  const res = dns.strs("resolvers");
  if (res) b.push(line(["resolvers", ...res]));
  const od = dns.str("override_domain");
  if (od !== undefined) b.push(line(["dns_challenge_override_domain", od]));
}

/** The block of `issuer acme` (and `cert_issuer acme`). */
function acmeLines(f: Fields, b: Line[], ctx: Ctx): void {
  const ca = f.str("ca");
  if (ca !== undefined) b.push(line(["dir", ca]));
  const test = f.str("test_ca");
  if (test !== undefined) b.push(line(["test_dir", test]));
  const em = f.str("email");
  if (em !== undefined) b.push(line(["email", em]));
  const profile = f.str("profile");
  if (profile !== undefined) b.push(line(["profile", profile]));
  dur(f, "acme_timeout", "timeout", b);
  const roots = f.strs("trusted_roots_pem_files");
  if (roots) b.push(line(["trusted_roots", ...roots]));
  const eab = f.fields("external_account");
  if (eab) {
    const id = eab.str("key_id"), mac = eab.str("mac_key");
    eab.done("external_account");
    b.push(line(["eab", id ?? "", mac ?? ""]));
  }
  const ch = f.fields("challenges");
  if (ch) {
    const http = ch.fields("http");
    if (http) {
      if (http.bool("disabled")) b.push(line(["disable_http_challenge"]));
      const port = http.num("alternate_port");
      if (port !== undefined) b.push(line(["alt_http_port", String(port)]));
      http.done("the http challenge");
    }
    const alpn = ch.fields("tls-alpn");
    if (alpn) {
      if (alpn.bool("disabled")) b.push(line(["disable_tlsalpn_challenge"]));
      const port = alpn.num("alternate_port");
      if (port !== undefined) b.push(line(["alt_tlsalpn_port", String(port)]));
      alpn.done("the tls-alpn challenge");
    }
    const dns = ch.fields("dns");
    if (dns) {
      dnsLines(dns, b, ctx);
      dns.done("the dns challenge");
    }
    const bind = ch.str("bind_host");
    if (bind !== undefined) ctx.problems.add(ch.at("bind_host"), "comes from a bind directive");
    ch.done("acme challenges");
  }
  const pc = f.fields("preferred_chains");
  if (pc) {
    const pb: Line[] = [];
    const any = pc.strs("any_common_name");
    if (any) pb.push(line(["any_common_name", ...any]));
    const root = pc.strs("root_common_name");
    if (root) pb.push(line(["root_common_name", ...root]));
    const smallest = pc.bool("smallest") ? ["smallest"] : [];
    pc.done("preferred_chains");
    b.push(line(["preferred_chains", ...smallest], pb.length ? pb : undefined));
  }
}

/** One issuer as `<module> [args] { ... }` words (for `issuer` and `cert_issuer`). */
export function issuerLine(issuer: unknown, path: string, ctx: Ctx, head: string): Line | null {
  if (!isObject(issuer)) {
    ctx.problems.add(path, "an issuer must be an object");
    return null;
  }
  const f = new Fields(issuer, path, ctx.problems);
  const mod = f.str("module");
  const b: Line[] = [];
  if (mod === "internal") {
    const ca = f.str("ca");
    if (ca !== undefined) b.push(line(["ca", ca]));
    if (f.has("lifetime")) b.push(line(["lifetime", durationText(f.take("lifetime")) ?? ""]));
    if (f.bool("sign_with_root")) b.push(line(["sign_with_root"]));
    f.done("the internal issuer");
    return line([head, "internal"], b.length ? b : undefined);
  }
  if (mod === "zerossl") {
    const key = f.str("api_key");
    const cv = f.fields("cname_validation");
    if (cv) {
      dnsLines(cv, b, ctx);
      cv.done("cname_validation");
    }
    f.done("the zerossl issuer");
    return line([head, "zerossl", ...(key !== undefined ? [key] : [])], b.length ? b : undefined);
  }
  if (mod === "acme") {
    acmeLines(f, b, ctx);
    f.done("the acme issuer");
    return line([head, "acme"], b.length ? b : undefined);
  }
  ctx.problems.add(path, `certificate issuer ${mod} has no Gatehousefile form here`);
  f.skip(...f.rest());
  return null;
}

/** The `issuer` lines of a policy's issuers, or its `tls` argument (`internal`, an email). */
export function issuerLines(
  issuers: unknown,
  path: string,
  ctx: Ctx,
): Line[] | { arg: string[] } | null {
  if (stable(issuers) === INTERNAL) return { arg: ["internal"] };
  const email = implicitEmail(issuers);
  if (email !== undefined) return { arg: [email] };
  if (!Array.isArray(issuers)) {
    ctx.problems.add(path, "issuers must be an array");
    return null;
  }
  const out: Line[] = [];
  for (const [i, iss] of issuers.entries()) {
    const l = issuerLine(iss, childPath(path, i), ctx, "issuer");
    if (!l) return null;
    out.push(l);
  }
  return out;
}
