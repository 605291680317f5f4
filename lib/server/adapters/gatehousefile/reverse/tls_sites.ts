/**
 * Site TLS in the JSON → Gatehousefile direction: the lines of each site's `tls` directive
 * (collected from the tls app and the connection policies, written once per site), and the
 * servers' TLS connection policies → certificate files, protocols, ciphers, curves, ALPN and
 * `client_auth`. Policies holding only the site names they match are derived and not written.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import type { Site } from "./sites.ts";
import { poolSpec, verifierLines } from "../../../caddyfile/writer/trust_pool.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";

/** Site TLS lines collected per site, written as one `tls` directive each. */
export class SiteTls {
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

/** One server's connection policies, and where the lines they ask for go. */
export interface ServerPolicies {
  /** The server's `tls_connection_policies`, as given. */
  policies: unknown;
  /** Their JSON path. */
  path: string;
  /** The server's sites. */
  sites: Site[];
  /** The sites' `tls` lines, collected. */
  siteTls: SiteTls;
  /** Loaded certificates by tag that no policy has selected yet (a selected one leaves). */
  loaded: Map<string, { cert: string; key: string; path: string }>;
}

/** Adds the `tls` lines the connection policies of one server ask for to its sites. */
export function connPolicyLines(o: ServerPolicies, ctx: Ctx): void {
  const { policies, path, sites, siteTls, loaded } = o;
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
