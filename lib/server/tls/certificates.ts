/**
 * Certificates of the `tls` app: `certificates.load_files` and `certificates.load_pem`
 * (Caddy's JSON), PEM checks, and the names (subjectAltName DNS and IP entries) each
 * certificate covers (`pki/der.ts`).
 *
 * @module
 */
import { Decoder } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import {
  certificateCommonName,
  certificateNames,
  certificateVersion,
  pemDecode,
} from "../pki/der.ts";

/** One loaded certificate with its private key. */
export interface LoadedCertificate {
  /** PEM certificate chain (leaf first). */
  cert: string;
  /** PEM private key. */
  key: string;
  /** Tags from the config (`certificate_selection.any_tag` / `all_tags`). */
  tags: string[];
  /**
   * The names the leaf covers, lower case: its subject's common name (as Caddy's certificate
   * cache counts it), then the DNS names and IP addresses of its subjectAltName.
   */
  names: string[];
  /** Where it came from, for messages (`load_files[0]`, `load_pem[1]`). */
  source: string;
  /**
   * The leaf's X.509 version (1, 2 or 3). A v1 certificate (no extensions: self-signed ones
   * made by `openssl x509 -req` without `-extfile`) is refused by rustls, so the servers that
   * may serve it run on the node engine (see `http/server_options.ts`, `chooseEngine`).
   */
  version: number;
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
  let version: number;
  try {
    names = certificateNames(certs[0].der);
    version = certificateVersion(certs[0].der);
    // as Caddy's certificate cache (certmagic's fillCertFromLeaf): the subject's common name
    // first, then the subjectAltName entries (a v1 certificate has only the common name)
    const cn = certificateCommonName(certs[0].der)?.toLowerCase();
    if (cn) names = [cn, ...names.filter((n) => n !== cn)];
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
  return { cert, key, tags, names, source, version };
}

function tagsOf(d: Decoder): string[] {
  const t = d.value("tags");
  if (t === undefined) return [];
  if (!Array.isArray(t) || t.some((x) => typeof x !== "string")) {
    d.failAt("tags", "must be an array of strings");
  }
  return t as string[];
}

function pair(entry: unknown, where: string): { cert: string; key: string; tags: string[] } {
  const d = Decoder.of(entry, where).fields(["certificate", "key", "format", "tags"]);
  const format = d.value("format");
  if (format !== undefined && format !== "pem") {
    d.failAt("format", 'only "pem" is supported', "unsupported");
  }
  for (const k of ["certificate", "key"]) {
    const v = d.value(k);
    if (typeof v !== "string" || v === "") d.failAt(k, "must be a non-empty string");
  }
  return {
    cert: d.value("certificate") as string,
    key: d.value("key") as string,
    tags: tagsOf(d),
  };
}

function entries(d: Decoder, field: string): unknown[] {
  const v = d.value(field);
  if (v === undefined) return [];
  if (!Array.isArray(v)) d.failAt(field, "must be an array");
  return v;
}

/** Loads `apps.tls.certificates` (`load_files`, `load_pem`). Throws a ConfigError. */
export async function loadCertificates(raw: unknown): Promise<LoadedCertificate[]> {
  if (raw === undefined) return [];
  const d = Decoder.of(raw, "tls.certificates");
  for (const k of Object.keys(d.raw)) {
    if (k !== "load_files" && k !== "load_pem") {
      d.failAt(k, "not supported (only load_files and load_pem)", "unsupported");
    }
  }
  const out: LoadedCertificate[] = [];
  const files = entries(d, "load_files");
  for (let i = 0; i < files.length; i++) {
    const where = `${d.at("load_files")}[${i}]`;
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
  const pems = entries(d, "load_pem");
  for (let i = 0; i < pems.length; i++) {
    const where = `${d.at("load_pem")}[${i}]`;
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
