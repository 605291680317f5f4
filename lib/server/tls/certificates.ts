/**
 * Certificates of the `tls` app: `certificates.load_files` and `certificates.load_pem`
 * (Caddy's JSON), PEM checks, and the names (subjectAltName DNS and IP entries) each
 * certificate covers (`pki/der.ts`).
 *
 * @module
 */
import { noteAcceptedFields } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import { certificateNames, pemDecode } from "../pki/der.ts";

/** One loaded certificate with its private key. */
export interface LoadedCertificate {
  /** PEM certificate chain (leaf first). */
  cert: string;
  /** PEM private key. */
  key: string;
  /** Tags from the config (`certificate_selection.any_tag` / `all_tags`). */
  tags: string[];
  /** DNS names and IP addresses from the leaf's subjectAltName, lower case. */
  names: string[];
  /** Where it came from, for messages (`load_files[0]`, `load_pem[1]`). */
  source: string;
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks that `raw` has only `allowed` keys. */
export function tlsCheckFields(raw: Raw, allowed: readonly string[], where: string): void {
  noteAcceptedFields(where, allowed);
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k)) {
      throw new ConfigError("unknown_field", `${where}: unknown field ${JSON.stringify(k)}`);
    }
  }
}

/**
 * Checks a certificate/key PEM pair and reads the leaf's names. Throws a ConfigError
 * naming `source` (never the key material) when either part is not usable PEM.
 *
 * @example
 * ```ts
 * import { parseCertificate } from "./certificates.ts";
 * try {
 *   parseCertificate("not pem", "not pem", [], "load_pem[0]");
 * } catch (e) {
 *   console.log((e as Error).message); // load_pem[0]: certificate: no PEM CERTIFICATE block
 * }
 * ```
 */
export function parseCertificate(
  cert: string,
  key: string,
  tags: string[],
  source: string,
): LoadedCertificate {
  const certs = pemDecode(cert).filter((b) => b.label === "CERTIFICATE");
  if (!certs.length) {
    throw new ConfigError(
      "certificate_load",
      `${source}: certificate: no PEM CERTIFICATE block`,
    );
  }
  let names: string[];
  try {
    names = certificateNames(certs[0].der);
  } catch (e) {
    throw new ConfigError(
      "certificate_load",
      `${source}: certificate: not a valid X.509 certificate (${(e as Error).message})`,
    );
  }
  const keys = pemDecode(key).filter((b) => /PRIVATE KEY$/.test(b.label) && b.der.length);
  if (!keys.length) {
    throw new ConfigError("certificate_load", `${source}: key: no PEM PRIVATE KEY block`);
  }
  return { cert, key, tags, names, source };
}

function tagsOf(entry: Raw, where: string): string[] {
  const t = entry.tags;
  if (t === undefined) return [];
  if (!Array.isArray(t) || t.some((x) => typeof x !== "string")) {
    throw new ConfigError("invalid_config", `${where}.tags: must be an array of strings`);
  }
  return t as string[];
}

function pair(entry: unknown, where: string): { cert: string; key: string; tags: string[] } {
  if (!isObject(entry)) throw new ConfigError("invalid_config", `${where}: must be an object`);
  tlsCheckFields(entry, ["certificate", "key", "format", "tags"], where);
  if (entry.format !== undefined && entry.format !== "pem") {
    throw new ConfigError("unsupported", `${where}.format: only "pem" is supported`);
  }
  for (const k of ["certificate", "key"]) {
    if (typeof entry[k] !== "string" || entry[k] === "") {
      throw new ConfigError("invalid_config", `${where}.${k}: must be a non-empty string`);
    }
  }
  return {
    cert: entry.certificate as string,
    key: entry.key as string,
    tags: tagsOf(entry, where),
  };
}

function entries(raw: Raw, field: string): unknown[] {
  const v = raw[field];
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new ConfigError("invalid_config", `tls.certificates.${field}: must be an array`);
  }
  return v;
}

/** Loads `apps.tls.certificates` (`load_files`, `load_pem`). Throws a ConfigError. */
export async function loadCertificates(raw: unknown): Promise<LoadedCertificate[]> {
  if (raw === undefined) return [];
  if (!isObject(raw)) {
    throw new ConfigError("invalid_config", "tls.certificates: must be an object");
  }
  for (const k of Object.keys(raw)) {
    if (k !== "load_files" && k !== "load_pem") {
      throw new ConfigError(
        "unsupported",
        `tls.certificates.${k}: not supported (only load_files and load_pem)`,
      );
    }
  }
  const out: LoadedCertificate[] = [];
  const files = entries(raw, "load_files");
  for (let i = 0; i < files.length; i++) {
    const where = `tls.certificates.load_files[${i}]`;
    const p = pair(files[i], where);
    const read = async (path: string, what: string) => {
      try {
        return await Deno.readTextFile(path);
      } catch (e) {
        const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
        throw new ConfigError("certificate_load", `${where}: reading ${what} ${path}: ${why}`);
      }
    };
    const cert = await read(p.cert, "certificate");
    const key = await read(p.key, "key");
    out.push(parseCertificate(cert, key, p.tags, where));
  }
  const pems = entries(raw, "load_pem");
  for (let i = 0; i < pems.length; i++) {
    const where = `tls.certificates.load_pem[${i}]`;
    const p = pair(pems[i], where);
    out.push(parseCertificate(p.cert, p.key, p.tags, where));
  }
  return out;
}

/** True when `name` (a host, lower case) is covered by certificate name `pattern` (`*.x`). */
export function nameMatches(pattern: string, name: string): boolean {
  const p = pattern.toLowerCase();
  const n = name.toLowerCase().replace(/\.$/, "");
  if (p === n) return true;
  if (!p.startsWith("*.")) return false;
  const dot = n.indexOf(".");
  return dot > 0 && n.slice(dot + 1) === p.slice(2);
}
