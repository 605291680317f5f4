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
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { durationText } from "../../../config/duration.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import type { Site } from "./sites.ts";
import { MatcherScope } from "../../../caddyfile/writer/matchers.ts";
import { connPolicyLines, SiteTls } from "./tls_sites.ts";
import { implicitEmail, INTERNAL, issuerLine, issuerLines, stable } from "./tls_issuers.ts";
import { gline, type Line, line } from "../../../caddyfile/writer/tokens.ts";

/** Names that never get a public certificate (certmagic's rule, simplified). */
function isInternalName(s: string): boolean {
  const h = s.toLowerCase();
  return h === "localhost" || /\.(localhost|local|internal|home\.arpa)$/.test(h) ||
    /^[\d.]+$/.test(h) || h.includes(":");
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
    connPolicyLines({
      policies: value,
      path,
      sites: sites.filter((s) => s.servers.includes(server)),
      siteTls,
      loaded,
    }, ctx);
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
