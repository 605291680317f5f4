/**
 * The tls app and the servers' TLS connection policies → the `local_certs` / `key_type`
 * global options and each site's `tls` directive. The adapter derives much of the tls app
 * from site addresses (a policy per site, `automate` for names next to a catch-all key, an
 * internal policy for non-public names, empty and catch-all connection policies); those parts
 * are recognised as derived and not written. What is set explicitly becomes `tls internal`,
 * `tls force_automate` (a site's own names in `automate`), `tls { issuer internal {...};
 * on_demand; key_type; protocols; ciphers; curves; alpn; client_auth {...} }`.
 *
 * @module
 */
import type { Ctx } from "./context.ts";
import { durationText } from "./duration.ts";
import { childPath, Fields, isObject } from "./problems.ts";
import type { Site } from "./sites.ts";
import { MatcherScope } from "./matchers.ts";
import { poolSpec, verifierLines } from "./trust_pool.ts";
import { gline, type Line, line } from "./tokens.ts";

const INTERNAL = JSON.stringify([{ module: "internal" }]);
const ZEROSSL = "https://acme.zerossl.com/v2/DV90";

/** The email of the implicit issuers `email` or `tls <email>` make (ACME, then ZeroSSL). */
function implicitEmail(issuers: unknown): string | undefined {
  if (!Array.isArray(issuers) || issuers.length !== 2) return undefined;
  const [a, z] = issuers;
  if (!isObject(a) || !isObject(z) || typeof a.email !== "string") return undefined;
  if (stable(a) !== stable({ email: a.email, module: "acme" })) return undefined;
  if (stable(z) !== stable({ ca: ZEROSSL, email: a.email, module: "acme" })) return undefined;
  return a.email;
}

/** Names that never get a public certificate (certmagic's rule, simplified). */
function isInternalName(s: string): boolean {
  const h = s.toLowerCase();
  return h === "localhost" || /\.(localhost|local|internal|home\.arpa)$/.test(h) ||
    /^[\d.]+$/.test(h) || h.includes(":");
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (isObject(v)) {
    return `{${
      Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(",")
    }}`;
  }
  return JSON.stringify(v);
}

/** Site TLS lines collected per site, written as one `tls` directive each. */
class SiteTls {
  readonly bySite = new Map<Site, { arg?: string[]; lines: Line[]; keys: Set<string> }>();

  /** Adds a line, or the directive's arguments (`internal`, an email, a cert and key). */
  add(site: Site, key: string, l: Line | { arg: string[] }): void {
    let e = this.bySite.get(site);
    if (!e) this.bySite.set(site, e = { lines: [], keys: new Set() });
    if (e.keys.has(key)) return;
    e.keys.add(key);
    if ("arg" in l) e.arg = l.arg;
    else e.lines.push(l);
  }

  write(): void {
    for (const [site, e] of this.bySite) {
      if (!e.arg && e.lines.length === 1 && e.lines[0].words[0].text === "force_automate") {
        site.lines.push(line(["tls", "force_automate"]));
        continue;
      }
      const args = ["tls", ...(e.arg ?? [])];
      if (e.arg?.[0] === "internal" && e.arg.length === 1 && e.lines.length) {
        site.lines.push(line(["tls"], [line(["issuer", "internal"]), ...e.lines]));
      } else site.lines.push(line(args, e.lines.length ? e.lines : undefined));
    }
  }
}

/** A site without host names on an HTTPS port (made when the config has none). */
function hostlessSite(sites: Site[], make: () => Site): Site {
  const found = sites.find((s) =>
    s.hosts.length === 0 && s.keys.some((k) => /^(https:\/\/)?:\d+$/.test(k) && !k.endsWith(":80"))
  );
  if (found) return found;
  const site = make();
  sites.push(site);
  return site;
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
function issuerLine(issuer: unknown, path: string, ctx: Ctx, head: string): Line | null {
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

function issuerLines(
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

/** Writes the tls app: returns global option lines, adds `tls` directives to sites. */
export function reverseTlsApp(
  tls: Fields | undefined,
  sites: Site[],
  connPolicies: Map<string, { value: unknown; path: string }>,
  ctx: Ctx,
): Line[] {
  const newSite = (): Site => ({
    keys: [":443"],
    lines: [],
    scope: new MatcherScope(ctx.problems),
    identity: "",
    hosts: [],
    servers: [],
    serverHosts: new Map(),
    nestedGroup: Infinity,
  });
  const global: Line[] = [];
  const siteTls = new SiteTls();
  const loaded = new Map<string, { cert: string; key: string; path: string }>();
  const hostSites = (h: string) => sites.filter((s) => s.hosts.includes(h));
  if (tls) {
    const auto = tls.fields("automation");
    const policies = auto?.arr("policies") ?? [];
    let base = "{}";
    const catchAll = policies.findIndex((p) => isObject(p) && p.subjects === undefined);
    // the email option gives every policy of public names the same implicit issuers
    const emails = new Set(
      policies.filter((p) => isObject(p) && p.subjects !== undefined)
        .map((p) => implicitEmail((p as Record<string, unknown>).issuers)),
    );
    const globalEmail = catchAll < 0 && emails.size === 1 ? [...emails][0] : undefined;
    if (globalEmail !== undefined) {
      global.push(gline(["email", globalEmail]));
      base = stable({
        issuers: JSON.parse(JSON.stringify(policies.find((p) =>
          isObject(p) && p.subjects !== undefined
        ) as Record<string, unknown>)).issuers,
      });
    }
    if (catchAll >= 0) {
      const pf = new Fields(
        policies[catchAll] as Record<string, unknown>,
        childPath(auto!.at("policies"), catchAll),
        ctx.problems,
      );
      const issuers = pf.take("issuers");
      if (issuers !== undefined) {
        if (stable(issuers) === INTERNAL) global.push(gline(["local_certs"]));
        else if (Array.isArray(issuers)) {
          issuers.forEach((iss, k) => {
            const l = issuerLine(iss, childPath(pf.at("issuers"), k), ctx, "cert_issuer");
            if (l) global.push(l);
          });
        }
      }
      const kt = pf.str("key_type");
      if (kt !== undefined) global.push(gline(["key_type", kt]));
      const rwr = pf.num("renewal_window_ratio");
      if (rwr !== undefined) global.push(gline(["renewal_window_ratio", String(rwr)]));
      if (pf.bool("disable_ocsp_stapling")) global.push(gline(["ocsp_stapling", "off"]));
      if (pf.bool("on_demand")) {
        // a site without host names on an HTTPS port made the catch-all policy
        siteTls.add(hostlessSite(sites, newSite), "on_demand", line(["on_demand"]));
      }
      pf.done("the default automation policy");
      base = stable(Object.fromEntries(
        Object.entries(policies[catchAll] as object).filter(([k]) => k !== "on_demand"),
      ));
    }
    policies.forEach((p, i) => {
      if (i === catchAll || !isObject(p)) return;
      const pp = childPath(auto!.at("policies"), i);
      const { subjects, ...settings } = p;
      const subs = Array.isArray(subjects) ? subjects.map(String) : [];
      const owners = new Set(subs.flatMap(hostSites));
      if (subs.some((s) => hostSites(s).length === 0)) {
        ctx.problems.add(
          childPath(pp, "subjects"),
          "an automation policy for names that no site serves has no Gatehousefile form",
        );
        return;
      }
      if (stable(settings) === base) return; // what every site gets anyway
      // the adapter gives names that cannot have a public certificate an internal policy
      if (stable(settings.issuers) === INTERNAL && subs.every(isInternalName)) {
        const rest = { ...settings };
        delete rest.issuers;
        if (stable(rest) === "{}") return;
      }
      const f = new Fields(settings, pp, ctx.problems);
      const add = (key: string, l: Line | { arg: string[] }) => {
        for (const s of owners) siteTls.add(s, key, l);
      };
      const issuers = f.take("issuers");
      if (issuers !== undefined && stable(issuers) !== stable(JSON.parse(base).issuers)) {
        const l = issuerLines(issuers, childPath(pp, "issuers"), ctx);
        if (Array.isArray(l)) l.forEach((x, k) => add(`issuer${k}`, x));
        else if (l) add("issuer", l);
      }
      if (f.bool("on_demand")) add("on_demand", line(["on_demand"]));
      const kt = f.str("key_type");
      if (kt !== undefined && kt !== JSON.parse(base).key_type) {
        add("key_type", line(["key_type", kt]));
      }
      const rwr = f.num("renewal_window_ratio");
      if (rwr !== undefined && rwr !== JSON.parse(base).renewal_window_ratio) {
        add("renewal_window_ratio", line(["renewal_window_ratio", String(rwr)]));
      }
      for (const [k, g] of (f.arr("get_certificate") ?? []).entries()) {
        const gp = childPath(childPath(pp, "get_certificate"), k);
        if (
          isObject(g) && g.via === "http" && typeof g.url === "string" &&
          Object.keys(g).length === 2
        ) {
          add(`get_certificate${k}`, line(["get_certificate", "http", g.url]));
        } else if (isObject(g) && g.via === "tailscale" && Object.keys(g).length === 1) {
          add(`get_certificate${k}`, line(["get_certificate", "tailscale"]));
        } else ctx.problems.add(gp, "this certificate manager has no form here");
      }
      f.done("an automation policy");
    });
    const od = auto?.fields("on_demand");
    if (od) {
      const b: Line[] = [];
      const perm = od.obj("permission");
      if (
        perm && perm.module === "http" && typeof perm.endpoint === "string" &&
        Object.keys(perm).length === 2
      ) {
        b.push(gline(["ask", perm.endpoint]));
      } else if (perm) {
        ctx.problems.add(od.at("permission"), "this on-demand permission has no form here");
      }
      od.done("on-demand TLS");
      global.push(gline(["on_demand_tls"], b));
    }
    for (
      const [field, opt] of [["renew_interval", "renew_interval"], [
        "ocsp_interval",
        "ocsp_interval",
      ], ["storage_clean_interval", "storage_clean_interval"]]
    ) {
      if (!auto?.has(field)) continue;
      const d = durationText(auto.take(field));
      if (d !== undefined) global.push(gline([opt, d]));
    }
    auto?.done("tls automation");
    const certs = tls.fields("certificates");
    if (certs) {
      for (const [k, lf] of (certs.arr("load_files") ?? []).entries()) {
        const tags = isObject(lf) && Array.isArray(lf.tags) ? lf.tags : [];
        if (
          isObject(lf) && typeof lf.certificate === "string" && typeof lf.key === "string" &&
          tags.length === 1 && Object.keys(lf).length === 3
        ) {
          loaded.set(String(tags[0]), {
            cert: lf.certificate,
            key: lf.key,
            path: childPath(certs.at("load_files"), k),
          });
        } else {
          ctx.problems.add(
            childPath(certs.at("load_files"), k),
            "only certificate, key and one tag have a form",
          );
        }
      }
      const automate = certs.strs("automate") ?? [];
      for (const h of automate) {
        const own = hostSites(h);
        // a site's own name is automated by `tls force_automate`
        for (const s of own) siteTls.add(s, "force_automate", line(["force_automate"]));
        // a name in the same block as an address without host names is automated
        if (own.length === 0) hostlessSite(sites, newSite).keys.push(h);
      }
      certs.done("tls certificates");
    }
    const dns = tls.obj("dns");
    if (dns) {
      const { name, ...args } = dns;
      const keys = Object.keys(args);
      if (typeof name === "string" && (keys.length === 0 || keys.join() === "argument")) {
        global.push(gline(["dns", name, ...(keys.length ? [String(args.argument)] : [])]));
      } else {ctx.problems.add(
          tls.at("dns"),
          `options of DNS provider ${String(name)} have no form here`,
        );}
    }
    if (tls.bool("disable_storage_check")) global.push(gline(["storage_check", "off"]));
    if (tls.bool("disable_storage_clean")) global.push(gline(["storage_clean_interval", "off"]));
    if (
      tls.bool("disable_ocsp_stapling") && !global.some((l) => l.words[0].text === "ocsp_stapling")
    ) {
      global.push(gline(["ocsp_stapling", "off"]));
    }
    const resolvers = tls.strs("resolvers");
    if (resolvers) global.push(gline(["tls_resolvers", ...resolvers]));
    tls.done("the tls app");
  }
  for (const [server, { value, path }] of connPolicies) {
    connPolicyLines(
      value,
      path,
      sites.filter((s) => s.servers.includes(server)),
      siteTls,
      loaded,
      ctx,
    );
  }
  for (const [tag, l] of loaded) {
    ctx.problems.add(
      l.path,
      `a certificate tagged ${tag} that no connection policy selects has no form`,
    );
  }
  siteTls.write();
  return global;
}

function connPolicyLines(
  policies: unknown,
  path: string,
  sites: Site[],
  siteTls: SiteTls,
  loaded: Map<string, { cert: string; key: string; path: string }>,
  ctx: Ctx,
): void {
  if (!Array.isArray(policies)) return;
  policies.forEach((p, i) => {
    const pp = childPath(path, i);
    if (!isObject(p)) return;
    const f = new Fields(p, pp, ctx.problems);
    const match = f.obj("match");
    const sni = match && Array.isArray(match.sni) ? match.sni.map(String) : [];
    const otherMatch = Object.keys(match ?? {}).filter((k) => k !== "sni");
    if (otherMatch.length) {
      ctx.problems.add(
        childPath(childPath(pp, "match"), otherMatch[0]),
        "connection policies match only site names (sni) in a Gatehousefile",
      );
      return;
    }
    const owners = match
      ? sites.filter((s) => sni.some((h) => s.hosts.includes(h)))
      : sites.filter((s) => s.hosts.length === 0);
    if (Object.keys(p).every((k) => k === "match")) return; // derived (empty or sni only)
    if (owners.length === 0) {
      ctx.problems.add(pp, "a TLS connection policy for names that no site serves has no form");
      f.skip(...f.rest());
      return;
    }
    const lines: [string, Line | { arg: string[] }][] = [];
    const sel = f.obj("certificate_selection");
    if (sel) {
      const tag = Array.isArray(sel.any_tag) && sel.any_tag.length === 1
        ? String(sel.any_tag[0])
        : "";
      const l = loaded.get(tag);
      if (l && Object.keys(sel).length === 1) {
        loaded.delete(tag);
        lines.push(["load", { arg: [l.cert, l.key] }]);
      } else {
        ctx.problems.add(
          childPath(pp, "certificate_selection"),
          "only a certificate loaded by tls <cert> <key> has a form here",
        );
      }
    }
    const min = f.str("protocol_min"), max = f.str("protocol_max");
    if (min !== undefined) {
      lines.push(["protocols", line(["protocols", min, ...(max ? [max] : [])])]);
    }
    const ciphers = f.strs("cipher_suites");
    if (ciphers) lines.push(["ciphers", line(["ciphers", ...ciphers])]);
    const curves = f.strs("curves");
    if (curves) lines.push(["curves", line(["curves", ...curves])]);
    const alpn = f.strs("alpn");
    if (alpn) lines.push(["alpn", line(["alpn", ...alpn])]);
    const ca = f.fields("client_authentication");
    if (ca) {
      const b: Line[] = [];
      const mode = ca.str("mode");
      if (mode !== undefined) b.push(line(["mode", mode]));
      if (ca.has("ca")) {
        const spec = poolSpec(ca.take("ca"), ca.at("ca"), ctx.problems);
        if (spec) b.push(line(["trust_pool", ...spec.words], spec.block));
      }
      if (ca.has("verifiers")) {
        const v = verifierLines(ca.take("verifiers"), ca.at("verifiers"), ctx.problems);
        if (v) b.push(...v);
      }
      const leaf = ca.strs("trusted_leaf_certs");
      for (const c of leaf ?? []) b.push(line(["trusted_leaf_cert", c]));
      ca.done("client authentication");
      lines.push(["client_auth", line(["client_auth"], b)]);
    }
    f.done("a TLS connection policy");
    for (const s of owners) for (const [k, l] of lines) siteTls.add(s, k, l);
  });
}
