/**
 * The `leaf` client certificate verifier (`tls.client_auth.verifier.leaf`): the client's
 * certificate must be one of a list, loaded by `leaf_certs_loaders` — `file` (`files`),
 * `folder` (`folders`: every `.pem` file below them), `pem` (`certificates`: PEM text) and
 * `storage` (`certificates`: keys in the configured storage). The deprecated
 * `trusted_leaf_certs` (base64 DER) feeds the same check. Other verifier modules are refused.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import type { ProvisionContext } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import { ConfigError } from "../../config/error.ts";
import { fromPem, fromPemFiles, fromStorageKeys, stringList } from "./trust_pool.ts";

async function pemFilesBelow(dir: string, where: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(d));
    } catch (e) {
      throw new ConfigError("invalid_config", `${where}: reading ${d}: ${(e as Error).message}`);
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const p = `${d.replace(/\/$/, "")}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.name.toLowerCase().endsWith(".pem")) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

async function loadLeaves(d: Decoder, ctx: ProvisionContext): Promise<X509.X509Certificate[]> {
  const where = d.path;
  switch (d.value("loader")) {
    case "file":
      d.fields(["loader", "files"]);
      return await fromPemFiles(stringList(d, "files"), where);
    case "folder": {
      d.fields(["loader", "folders"]);
      const out: X509.X509Certificate[] = [];
      for (const f of stringList(d, "folders")) {
        out.push(...await fromPemFiles(await pemFilesBelow(f, where), where));
      }
      return out;
    }
    case "pem": {
      d.fields(["loader", "certificates"]);
      const out: X509.X509Certificate[] = [];
      for (const pem of stringList(d, "certificates")) out.push(...await fromPem(pem, where));
      return out;
    }
    case "storage":
      d.fields(["loader", "certificates", "storage"]);
      return await fromStorageKeys(d, "certificates", ctx);
    default:
      throw d.error(
        `unknown leaf certificate loader ${JSON.stringify(d.value("loader") ?? "")} ` +
          `(file, folder, pem or storage)`,
      );
  }
}

/** Decodes a verifier; returns the trusted leaf certificates it checks against. */
export async function loadVerifier(
  d: Decoder,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  const verifier = d.value("verifier");
  if (verifier !== "leaf") {
    d.fail(
      `client certificate verifier ${JSON.stringify(verifier ?? "")} ` +
        `(tls.client_auth.verifier.${verifier}) is not available; only "leaf"`,
      "unsupported",
    );
  }
  d.fields(["verifier", "leaf_certs_loaders"]);
  const loaders = d.value("leaf_certs_loaders") ?? [];
  if (!Array.isArray(loaders)) d.failAt("leaf_certs_loaders", "must be an array");
  const out: X509.X509Certificate[] = [];
  for (let i = 0; i < loaders.length; i++) {
    const l = Decoder.of(loaders[i], `${d.at("leaf_certs_loaders")}[${i}]`);
    out.push(...await loadLeaves(l, ctx));
  }
  return out;
}

/** True when `der` is one of `leaves` (byte for byte). */
export function isTrustedLeaf(der: Uint8Array, leaves: X509.X509Certificate[]): boolean {
  return leaves.some((l) => {
    const raw = new Uint8Array(l.rawData);
    return raw.length === der.length && raw.every((b, i) => b === der[i]);
  });
}
