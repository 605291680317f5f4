/**
 * Certificate pools (`tls.ca_pool.source.*`) → `trust_pool <provider> { ... }`, and client
 * certificate verifiers → `verifier leaf { file ...; folder ... }`; shared by the site `tls`
 * directive's `client_auth` and `reverse_proxy`'s `tls_trust_pool`.
 *
 * @module
 */
import { childPath, isObject, type Problems } from "./problems.ts";
import { type Line, line } from "./tokens.ts";

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((s) => typeof s === "string") ? v : undefined;
}

/** The words and block after `trust_pool` (or `source`) for a pool; null after a problem. */
export function poolSpec(
  pool: unknown,
  path: string,
  problems: Problems,
): { words: string[]; block?: Line[] } | null {
  if (!isObject(pool)) return null;
  const { provider, ...rest } = pool;
  const keys = Object.keys(rest).sort().join();
  switch (provider) {
    case "system":
      if (keys === "") return { words: ["system"] };
      break;
    case "inline": {
      const certs = strings(rest.trusted_ca_certs);
      if (certs && keys === "trusted_ca_certs") {
        return { words: ["inline"], block: certs.map((c) => line(["trust_der", c])) };
      }
      break;
    }
    case "file": {
      const files = strings(rest.pem_files);
      if (files && keys === "pem_files") {
        return { words: ["file"], block: [line(["pem_file", ...files])] };
      }
      break;
    }
    case "pki_root":
    case "pki_intermediate": {
      const auth = strings(rest.authority);
      if (auth && keys === "authority") {
        return { words: [provider], block: [line(["authority", ...auth])] };
      }
      break;
    }
    case "combined": {
      if (keys !== "sources" || !Array.isArray(rest.sources)) break;
      const block: Line[] = [];
      for (const [i, src] of rest.sources.entries()) {
        const s = poolSpec(src, childPath(childPath(path, "sources"), i), problems);
        if (!s) return null;
        block.push(line(["source", ...s.words], s.block));
      }
      return { words: ["combined"], block };
    }
  }
  problems.add(path, `this certificate pool (${String(provider)}) has no Gatehousefile form here`);
  return null;
}

/** `verifier` lines for client certificate verifiers; null after a problem. */
export function verifierLines(v: unknown, path: string, problems: Problems): Line[] | null {
  if (!Array.isArray(v)) return null;
  const out: Line[] = [];
  for (const [i, ver] of v.entries()) {
    const vp = childPath(path, i);
    if (isObject(ver) && typeof ver.verifier === "string" && Object.keys(ver).length === 1) {
      // a verifier without options (`verifier dummy`)
      out.push(line(["verifier", ver.verifier]));
      continue;
    }
    if (!isObject(ver) || ver.verifier !== "leaf") {
      problems.add(vp, "only the leaf verifier and verifiers without options have a form here");
      return null;
    }
    const b: Line[] = [];
    const loaders = Array.isArray(ver.leaf_certs_loaders) ? ver.leaf_certs_loaders : [];
    for (const [k, l] of loaders.entries()) {
      const files = isObject(l) && l.loader === "file" ? strings(l.files) : undefined;
      const folders = isObject(l) && l.loader === "folder" ? strings(l.folders) : undefined;
      if (files && Object.keys(l as object).length === 2) b.push(line(["file", ...files]));
      else if (folders && Object.keys(l as object).length === 2) {
        b.push(line(["folder", ...folders]));
      } else {
        problems.add(
          childPath(childPath(vp, "leaf_certs_loaders"), k),
          "this leaf loader has no form",
        );
        return null;
      }
    }
    if (Object.keys(ver).some((k) => k !== "verifier" && k !== "leaf_certs_loaders")) {
      problems.add(vp, "options of the leaf verifier have no form here");
      return null;
    }
    out.push(line(["verifier", "leaf"], b));
  }
  return out;
}
