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
import { Decoder } from "../../config/decode.ts";
import { ConfigError } from "../../config/error.ts";

/** Where the operating system keeps its trusted roots (Debian/Ubuntu, Fedora/RHEL, Alpine...). */
export const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
  "/etc/ssl/ca-bundle.pem",
];

/** The strings of `key` (absent or null: none). */
export function stringList(d: Decoder, key: string): string[] {
  const v = d.value(key);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    d.failAt(key, "must be an array of strings");
  }
  return v as string[];
}

/**
 * The certificates of the PEM values under the storage keys listed in `field` (a `storage`
 * of the loader's own is refused: the configured storage is used).
 */
export async function fromStorageKeys(
  d: Decoder,
  field: string,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  if (d.value("storage") !== undefined) {
    d.failAt(
      "storage",
      "a storage of its own is not supported; the configured storage is used",
      "unsupported",
    );
  }
  const out: X509.X509Certificate[] = [];
  for (const key of stringList(d, field)) {
    const bytes = await ctx.storage.load(key).catch((e: Error) => {
      throw d.error(`loading ${key}: ${e.message}`);
    });
    out.push(...await fromPem(new TextDecoder().decode(bytes), `storage key ${key}`));
  }
  return out;
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
  d: Decoder,
  ctx: ProvisionContext,
  which: "root" | "intermediate",
): Promise<X509.X509Certificate[]> {
  d.fields(["provider", "authority"]);
  const ids = stringList(d, "authority");
  if (!ids.length) d.fail("no authorities specified");
  const pki = await ctx.app<PkiApp>("pki");
  if (!pki) d.fail("the pki app is not available");
  const out: X509.X509Certificate[] = [];
  for (const id of ids) {
    const ca = await pki.getCA(id);
    out.push(...await fromPem(which === "root" ? ca.rootPem : ca.intermediatePem, `CA ${id}`));
  }
  return out;
}

/** Decodes and loads a trust pool (`ca` with its `provider`). */
export async function loadTrustPool(
  d: Decoder,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  const provider = d.value("provider");
  switch (provider) {
    case "inline":
      d.fields(["provider", "trusted_ca_certs", "trusted_ca_certs_pem_files"]);
      return [
        ...await fromBase64(stringList(d, "trusted_ca_certs"), d.at("trusted_ca_certs")),
        ...await fromPemFiles(stringList(d, "trusted_ca_certs_pem_files"), d.path),
      ];
    case "file":
      d.fields(["provider", "pem_files"]);
      return await fromPemFiles(stringList(d, "pem_files"), d.path);
    case "pki_root":
      return await pkiCerts(d, ctx, "root");
    case "pki_intermediate":
      return await pkiCerts(d, ctx, "intermediate");
    case "system":
      d.fields(["provider"]);
      return await systemRoots(d.path);
    case "storage":
      d.fields(["provider", "pem_keys", "storage"]);
      return await fromStorageKeys(d, "pem_keys", ctx);
    case "combined": {
      d.fields(["provider", "sources"]);
      const sources = d.value("sources");
      if (!Array.isArray(sources)) d.failAt("sources", "must be an array");
      const out: X509.X509Certificate[] = [];
      for (let i = 0; i < sources.length; i++) {
        out.push(...await loadTrustPool(Decoder.of(sources[i], `${d.at("sources")}[${i}]`), ctx));
      }
      return out;
    }
    case "http":
    case "lazy":
      throw d.error(
        `trust pool provider ${provider} (tls.ca_pool.source.${provider}) is not available; ` +
          `use inline, file, pki_root, pki_intermediate, system, storage or combined`,
        "unsupported",
      );
    default:
      throw d.error(`unknown trust pool provider ${JSON.stringify(provider ?? "")}`);
  }
}
