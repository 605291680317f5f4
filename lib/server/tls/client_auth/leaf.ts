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
import { tlsCheckFields } from "../certificates.ts";
import { ConfigError } from "../../config/error.ts";
import { fromPem, fromPemFiles } from "./trust_pool.ts";

type Raw = Record<string, unknown>;

function strings(raw: Raw, key: string, where: string): string[] {
  const v = raw[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw new ConfigError("invalid_config", `${where}.${key}: must be an array of strings`);
  }
  return v as string[];
}

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

async function loadLeaves(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  switch (raw.loader) {
    case "file":
      tlsCheckFields(raw, ["loader", "files"], where);
      return await fromPemFiles(strings(raw, "files", where), where);
    case "folder": {
      tlsCheckFields(raw, ["loader", "folders"], where);
      const out: X509.X509Certificate[] = [];
      for (const f of strings(raw, "folders", where)) {
        out.push(...await fromPemFiles(await pemFilesBelow(f, where), where));
      }
      return out;
    }
    case "pem": {
      tlsCheckFields(raw, ["loader", "certificates"], where);
      const out: X509.X509Certificate[] = [];
      for (const pem of strings(raw, "certificates", where)) out.push(...await fromPem(pem, where));
      return out;
    }
    case "storage": {
      tlsCheckFields(raw, ["loader", "certificates", "storage"], where);
      if (raw.storage !== undefined) {
        throw new ConfigError(
          "unsupported",
          `${where}.storage: a storage of its own is not supported; the configured storage is used`,
        );
      }
      const out: X509.X509Certificate[] = [];
      for (const key of strings(raw, "certificates", where)) {
        const bytes = await ctx.storage.load(key).catch((e: Error) => {
          throw new ConfigError("invalid_config", `${where}: loading ${key}: ${e.message}`);
        });
        out.push(...await fromPem(new TextDecoder().decode(bytes), `storage key ${key}`));
      }
      return out;
    }
    default:
      throw new ConfigError(
        "invalid_config",
        `${where}: unknown leaf certificate loader ${JSON.stringify(raw.loader ?? "")} ` +
          `(file, folder, pem or storage)`,
      );
  }
}

/** Decodes a verifier; returns the trusted leaf certificates it checks against. */
export async function loadVerifier(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
): Promise<X509.X509Certificate[]> {
  if (raw.verifier !== "leaf") {
    throw new ConfigError(
      "unsupported",
      `${where}: client certificate verifier ${JSON.stringify(raw.verifier ?? "")} ` +
        `(tls.client_auth.verifier.${raw.verifier}) is not available; only "leaf"`,
    );
  }
  tlsCheckFields(raw, ["verifier", "leaf_certs_loaders"], where);
  const loaders = raw.leaf_certs_loaders ?? [];
  if (!Array.isArray(loaders)) {
    throw new ConfigError("invalid_config", `${where}.leaf_certs_loaders: must be an array`);
  }
  const out: X509.X509Certificate[] = [];
  for (let i = 0; i < loaders.length; i++) {
    const l = loaders[i];
    if (typeof l !== "object" || l === null || Array.isArray(l)) {
      throw new ConfigError(
        "invalid_config",
        `${where}.leaf_certs_loaders[${i}]: must be an object`,
      );
    }
    out.push(...await loadLeaves(l as Raw, `${where}.leaf_certs_loaders[${i}]`, ctx));
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
