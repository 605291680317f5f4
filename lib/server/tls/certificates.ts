/**
 * Certificates of the `tls` app: `certificates.load_files` and `certificates.load_pem`
 * (Caddy's JSON), PEM checks, and the names (subjectAltName DNS and IP entries) each
 * certificate covers, read with a small DER walker so the server needs no X.509 library.
 *
 * @module
 */
import { noteAcceptedFields } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";

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

function pemBlocks(pem: string): { label: string; der: Uint8Array }[] {
  const out: { label: string; der: Uint8Array }[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (const m of pem.matchAll(re)) {
    const b64 = m[2].replace(/\s+/g, "");
    try {
      out.push({ label: m[1], der: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) });
    } catch {
      out.push({ label: m[1], der: new Uint8Array() });
    }
  }
  return out;
}

interface Tlv {
  tag: number;
  start: number;
  end: number;
}

function readTlv(b: Uint8Array, pos: number): Tlv {
  const tag = b[pos];
  let len = b[pos + 1];
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error("bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[p++];
  }
  if (tag === undefined || p + len > b.length) throw new Error("truncated DER");
  return { tag, start: p, end: p + len };
}

function children(b: Uint8Array, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = t.start; p < t.end;) {
    const c = readTlv(b, p);
    out.push(c);
    p = c.end;
  }
  return out;
}

const SAN_OID = "551d11"; // 2.5.29.17

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function ipText(b: Uint8Array): string {
  if (b.length === 4) return b.join(".");
  const groups: string[] = [];
  for (let i = 0; i < b.length; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
}

/** DNS names and IPs of a DER certificate's subjectAltName extension. Throws on bad DER. */
export function certificateNames(der: Uint8Array): string[] {
  const cert = readTlv(der, 0);
  const tbs = children(der, cert)[0];
  const exts = children(der, tbs).find((t) => t.tag === 0xa3);
  if (!exts) return [];
  const names: string[] = [];
  for (const ext of children(der, children(der, exts)[0])) {
    const parts = children(der, ext);
    if (hex(der.subarray(parts[0].start, parts[0].end)) !== SAN_OID) continue;
    const value = parts[parts.length - 1];
    const seq = readTlv(der, value.start);
    for (const gn of children(der, seq)) {
      const bytes = der.subarray(gn.start, gn.end);
      if (gn.tag === 0x82) names.push(new TextDecoder().decode(bytes).toLowerCase());
      else if (gn.tag === 0x87) names.push(ipText(bytes));
    }
  }
  return names;
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
  const certs = pemBlocks(cert).filter((b) => b.label === "CERTIFICATE");
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
  const keys = pemBlocks(key).filter((b) => /PRIVATE KEY$/.test(b.label) && b.der.length);
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
