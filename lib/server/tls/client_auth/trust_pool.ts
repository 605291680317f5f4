/**
 * Trust pools (`tls.ca_pool.source.*`, the `ca` of `client_authentication`): `inline`
 * (base64 DER `trusted_ca_certs`, `trusted_ca_certs_pem_files`), `file` (`pem_files`),
 * `pki_root` and `pki_intermediate` (the `pki` app's CAs by id, `authority`), `system` (the
 * operating system's trusted roots), `storage` (`pem_keys` in the configured storage) and
 * `combined` (`sources`). The `http` and `lazy` providers are refused by name.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import type { ProvisionContext } from "../../module/mod.ts";
import type { PkiApp } from "../../pki/app.ts";
import { x509 } from "../../pki/x509.ts";
import { pemDecode } from "../../pki/der.ts";
import { tlsCheckFields } from "../certificates.ts";
import { ConfigError } from "../../config/error.ts";

type Raw = Record<string, unknown>;

/** Where the operating system keeps its trusted roots (Debian/Ubuntu, Fedora/RHEL, Alpine...). */
export const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
  "/etc/ssl/ca-bundle.pem",
];

function strings(raw: Raw, key: string, where: string): string[] {
  const v = raw[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw new ConfigError("invalid_config", `${where}.${key}: must be an array of strings`);
  }
  return v as string[];
}

/** Parses base64 DER certificates. */
export async function fromBase64(list: string[], where: string): Promise<X509.X509Certificate[]> {
  const lib = await x509();
  return list.map((b64, i) => {
    try {
      const der = Uint8Array.from(atob(b64.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
      return new lib.X509Certificate(der as BufferSource);
    } catch (e) {
      throw new ConfigError(
        "invalid_config",
        `${where}[${i}]: not a base64 DER certificate (${(e as Error).message})`,
      );
    }
  });
}

/** The certificates of PEM text (`what` names its origin in errors). */
export async function fromPem(pem: string, what: string): Promise<X509.X509Certificate[]> {
  const lib = await x509();
  const blocks = pemDecode(pem).filter((b) => b.label === "CERTIFICATE");
  if (!blocks.length) {
    throw new ConfigError("invalid_config", `no CERTIFICATE PEM block found in ${what}`);
  }
  return blocks.map((b) => {
    try {
      return new lib.X509Certificate(b.der as BufferSource);
    } catch (e) {
      throw new ConfigError("invalid_config", `${what}: ${(e as Error).message}`);
    }
  });
}

/** The certificates of PEM files. */
export async function fromPemFiles(
  files: string[],
  where: string,
): Promise<X509.X509Certificate[]> {
  const out: X509.X509Certificate[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(f);
    } catch (e) {
      throw new ConfigError(
        "invalid_config",
        `${where}: reading ${f}: ${(e as Error).message}`,
      );
    }
    out.push(...await fromPem(text, f));
  }
  return out;
}

/** The operating system's trusted roots. */
export async function systemRoots(where: string): Promise<X509.X509Certificate[]> {
  for (const f of SYSTEM_BUNDLES) {
    let text: string;
    try {
      text = await Deno.readTextFile(f);
    } catch {
      continue;
    }
    const lib = await x509();
    const out: X509.X509Certificate[] = [];
    for (const b of pemDecode(text)) {
      if (b.label !== "CERTIFICATE") continue;
      try {
        out.push(new lib.X509Certificate(b.der as BufferSource));
      } catch { /* a bundle may hold what this parser cannot read: skipped as Go skips it */ }
    }
    return out;
  }
  throw new ConfigError(
    "invalid_config",
    `${where}: no system trust store found (looked for ${SYSTEM_BUNDLES.join(", ")})`,
  );
}

async function pkiCerts(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
  which: "root" | "intermediate",
): Promise<X509.X509Certificate[]> {
  tlsCheckFields(raw, ["provider", "authority"], where);
  const ids = strings(raw, "authority", where);
  if (!ids.length) throw new ConfigError("invalid_config", `${where}: no authorities specified`);
  const pki = await ctx.app<PkiApp>("pki");
  if (!pki) {
    throw new ConfigError("invalid_config", `${where}: the pki app is not available`);
  }
  const out: X509.X509Certificate[] = [];
  for (const id of ids) {
    const ca = await pki.getCA(id);
    out.push(...await fromPem(which === "root" ? ca.rootPem : ca.intermediatePem, `CA ${id}`));
  }
  return out;
}

/** Decodes and loads a trust pool (`ca` with its `provider`). */
export async function loadTrustPool(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  const provider = raw.provider;
  switch (provider) {
    case "inline":
      tlsCheckFields(raw, ["provider", "trusted_ca_certs", "trusted_ca_certs_pem_files"], where);
      return [
        ...await fromBase64(strings(raw, "trusted_ca_certs", where), `${where}.trusted_ca_certs`),
        ...await fromPemFiles(strings(raw, "trusted_ca_certs_pem_files", where), where),
      ];
    case "file":
      tlsCheckFields(raw, ["provider", "pem_files"], where);
      return await fromPemFiles(strings(raw, "pem_files", where), where);
    case "pki_root":
      return await pkiCerts(raw, where, ctx, "root");
    case "pki_intermediate":
      return await pkiCerts(raw, where, ctx, "intermediate");
    case "system":
      tlsCheckFields(raw, ["provider"], where);
      return await systemRoots(where);
    case "storage": {
      tlsCheckFields(raw, ["provider", "pem_keys", "storage"], where);
      if (raw.storage !== undefined) {
        throw new ConfigError(
          "unsupported",
          `${where}.storage: a storage of its own is not supported; the configured storage is used`,
        );
      }
      const out: X509.X509Certificate[] = [];
      for (const key of strings(raw, "pem_keys", where)) {
        const bytes = await ctx.storage.load(key).catch((e: Error) => {
          throw new ConfigError("invalid_config", `${where}: loading ${key}: ${e.message}`);
        });
        out.push(...await fromPem(new TextDecoder().decode(bytes), `storage key ${key}`));
      }
      return out;
    }
    case "combined": {
      tlsCheckFields(raw, ["provider", "sources"], where);
      const sources = raw.sources;
      if (!Array.isArray(sources)) {
        throw new ConfigError("invalid_config", `${where}.sources: must be an array`);
      }
      const out: X509.X509Certificate[] = [];
      for (let i = 0; i < sources.length; i++) {
        const s = sources[i];
        if (typeof s !== "object" || s === null || Array.isArray(s)) {
          throw new ConfigError("invalid_config", `${where}.sources[${i}]: must be an object`);
        }
        out.push(...await loadTrustPool(s as Raw, `${where}.sources[${i}]`, ctx));
      }
      return out;
    }
    case "http":
    case "lazy":
      throw new ConfigError(
        "unsupported",
        `${where}: trust pool provider ${provider} (tls.ca_pool.source.${provider}) is not available; ` +
          `use inline, file, pki_root, pki_intermediate, system, storage or combined`,
      );
    default:
      throw new ConfigError(
        "invalid_config",
        `${where}: unknown trust pool provider ${JSON.stringify(provider ?? "")}`,
      );
  }
}
