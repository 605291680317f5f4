/**
 * The pki app → the `pki { ca [<id>] { ... } }` and `skip_install_trust` global options. A CA
 * with no settings of its own (one the adapter adds because an `acme_server` or issuer names
 * it) is not written.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { durationText } from "../../../config/duration.ts";
import { type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { gline, type Line } from "../../../caddyfile/writer/tokens.ts";

function keyPair(f: Fields): Line[] {
  const out: Line[] = [];
  const cert = f.str("certificate");
  if (cert !== undefined) out.push(gline(["cert", cert]));
  const key = f.str("private_key");
  if (key !== undefined) out.push(gline(["key", key]));
  const format = f.str("format");
  if (format !== undefined) out.push(gline(["format", format]));
  return out;
}

/** Global option lines for the pki app. */
export function reversePki(pki: Fields, ctx: Ctx): Line[] {
  const out: Line[] = [];
  const cas = pki.fields("certificate_authorities");
  pki.done("the pki app");
  if (!cas) return out;
  const entries = Object.entries(cas.value);
  const skipTrust = entries.length > 0 &&
    entries.every(([, v]) => isObject(v) && v.install_trust === false);
  if (skipTrust) out.push(gline(["skip_install_trust"]));
  const caLines: Line[] = [];
  for (const [id] of entries) {
    const f = cas.fields(id);
    if (!f) continue;
    const trust = f.bool("install_trust");
    if (trust === false && !skipTrust) {
      ctx.problems.add(f.at("install_trust"), "install_trust off only for some CAs has no form");
    }
    const b: Line[] = [];
    const name = f.str("name");
    if (name !== undefined) b.push(gline(["name", name]));
    const root = f.str("root_common_name");
    if (root !== undefined) b.push(gline(["root_cn", root]));
    const inter = f.str("intermediate_common_name");
    if (inter !== undefined) b.push(gline(["intermediate_cn", inter]));
    for (const k of ["intermediate_lifetime", "maintenance_interval"]) {
      if (!f.has(k)) continue;
      const d = durationText(f.take(k));
      if (d === undefined) ctx.problems.add(f.at(k), "must be a duration");
      else b.push(gline([k, d]));
    }
    const ratio = f.num("renewal_window_ratio");
    if (ratio !== undefined) b.push(gline(["renewal_window_ratio", String(ratio)]));
    for (const k of ["root", "intermediate"]) {
      const kp = f.fields(k);
      if (kp) {
        b.push(gline([k], keyPair(kp)));
        kp.done(`the ${k} key pair`);
      }
    }
    f.done(`CA ${id}`);
    if (b.length === 0) continue; // named by a directive, nothing of its own
    caLines.push(gline(id === "local" ? ["ca"] : ["ca", id], b));
  }
  if (caLines.length) out.push(gline(["pki"], caLines));
  return out;
}
