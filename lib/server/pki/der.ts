/**
 * The few DER and PEM pieces the server reads synchronously, without loading an X.509
 * library on the handshake path: PEM blocks both ways, a DER walker, byte concatenation, and
 * the names (subjectAltName DNS and IP entries) a certificate covers, its subject's common name
 * and its X.509 version. Anything more goes through
 * `@peculiar/x509` (see `x509.ts`).
 *
 * @module
 */

/** One DER element: its tag and its contents. */
export interface DerNode {
  /** The tag byte. */
  tag: number;
  /** The contents (without tag and length). */
  body: Uint8Array;
}

/** The DER elements that follow each other in `der`. Throws on a bad or truncated length. */
export function derChildren(der: Uint8Array): DerNode[] {
  const out: DerNode[] = [];
  let p = 0;
  while (p < der.length) {
    const tag = der[p];
    let len = der[p + 1];
    let q = p + 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0 || n > 4) throw new Error("bad DER length");
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + der[q++];
    }
    if (tag === undefined || len === undefined || q + len > der.length) {
      throw new Error("truncated DER");
    }
    out.push({ tag, body: der.subarray(q, q + len) });
    p = q + len;
  }
  return out;
}

/**
 * The bytes of `parts`, one after the other.
 *
 * @example
 * ```ts
 * import { concatBytes } from "./der.ts";
 * concatBytes(new Uint8Array([1]), new Uint8Array([2, 3])); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * Standard base64 of DER, on one line (as JSON configs carry certificates).
 *
 * @example
 * ```ts
 * import { derBase64 } from "./der.ts";
 * derBase64(new Uint8Array([1, 2])); // "AQI="
 * ```
 */
export function derBase64(der: Uint8Array): string {
  let s = "";
  for (let i = 0; i < der.length; i += 0x8000) {
    s += String.fromCharCode(...der.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

function b64(der: Uint8Array): string {
  return derBase64(der).replace(/.{64}/g, "$&\n").replace(/\n$/, "");
}

/**
 * Encodes DER as one PEM block.
 *
 * @example
 * ```ts
 * import { pemEncode } from "./der.ts";
 * pemEncode("CERTIFICATE", new Uint8Array([1, 2])); // "-----BEGIN CERTIFICATE-----\nAQI=\n..."
 * ```
 */
export function pemEncode(label: string, der: Uint8Array): string {
  return `-----BEGIN ${label}-----\n${b64(der)}\n-----END ${label}-----\n`;
}

/**
 * The PEM blocks of a text, in order; a block whose base64 does not decode has empty `der`
 * (so a caller reports it by its label rather than by a decoder's message).
 *
 * @example
 * ```ts
 * import { pemDecode, pemEncode } from "./der.ts";
 * pemDecode(pemEncode("CERTIFICATE", new Uint8Array([1, 2])))[0].der; // Uint8Array [1, 2]
 * ```
 */
export function pemDecode(pem: string): { label: string; der: Uint8Array }[] {
  const out: { label: string; der: Uint8Array }[] = [];
  for (const m of pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)) {
    let der: Uint8Array;
    try {
      der = Uint8Array.from(atob(m[2].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
    } catch {
      der = new Uint8Array();
    }
    out.push({ label: m[1], der });
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
  // RFC 5952: the longest run of two or more zero groups (the first of equal ones) becomes "::"
  let start = -1, len = 0;
  for (let i = 0; i < groups.length;) {
    let j = i;
    while (j < groups.length && groups[j] === "0") j++;
    if (j - i > len && j - i >= 2) [start, len] = [i, j - i];
    i = j > i ? j : i + 1;
  }
  if (start < 0) return groups.join(":");
  return `${groups.slice(0, start).join(":")}::${groups.slice(start + len).join(":")}`;
}

/**
 * The X.509 version of a DER certificate (1, 2 or 3): its TBSCertificate's `[0]` version field,
 * which a v1 certificate leaves out. Throws on bad DER.
 *
 * @example
 * ```ts ignore
 * import { certificateVersion, pemDecode } from "./der.ts";
 * certificateVersion(pemDecode(pem)[0].der); // 3
 * ```
 */
export function certificateVersion(der: Uint8Array): number {
  const [cert] = derChildren(der);
  if (!cert) throw new Error("truncated DER");
  const [tbs] = derChildren(cert.body);
  if (!tbs) throw new Error("truncated DER");
  const [first] = derChildren(tbs.body);
  if (first?.tag !== 0xa0) return 1;
  const [version] = derChildren(first.body);
  if (version?.tag !== 0x02 || version.body.length !== 1) throw new Error("bad X.509 version");
  return version.body[0] + 1;
}

const CN_OID = "550403"; // 2.5.4.3

/**
 * The subject's common name of a DER certificate (the last CN attribute, as Go reads it), or
 * undefined without one. Throws on bad DER.
 *
 * @example
 * ```ts ignore
 * import { certificateCommonName, pemDecode } from "./der.ts";
 * certificateCommonName(pemDecode(pem)[0].der); // "localhost"
 * ```
 */
export function certificateCommonName(der: Uint8Array): string | undefined {
  const [cert] = derChildren(der);
  if (!cert) throw new Error("truncated DER");
  const [tbs] = derChildren(cert.body);
  if (!tbs) throw new Error("truncated DER");
  const fields = derChildren(tbs.body);
  // [version], serial, signature, issuer, validity, subject
  const subject = fields[fields[0]?.tag === 0xa0 ? 5 : 4];
  if (subject?.tag !== 0x30) throw new Error("no subject");
  return subjectCommonNames(subject).at(-1);
}

/** The CN attributes of a subject `Name`, in order. */
function subjectCommonNames(subject: DerNode): string[] {
  const out: string[] = [];
  for (const rdn of derChildren(subject.body)) {
    for (const atv of derChildren(rdn.body)) {
      const [type, value] = derChildren(atv.body);
      if (type && value && hex(type.body) === CN_OID) out.push(derString(value));
    }
  }
  return out;
}

/**
 * DNS names (lower case) and IPs of a DER certificate's subjectAltName extension. Throws on
 * bad DER.
 *
 * @example
 * ```ts ignore
 * import { certificateNames, pemDecode } from "./der.ts";
 * certificateNames(pemDecode(pem)[0].der); // ["example.com", "127.0.0.1"]
 * ```
 */
export function certificateNames(der: Uint8Array): string[] {
  const [cert] = derChildren(der);
  if (!cert) throw new Error("truncated DER");
  const [tbs] = derChildren(cert.body);
  if (!tbs) throw new Error("truncated DER");
  const exts = derChildren(tbs.body).find((t) => t.tag === 0xa3);
  if (!exts) return [];
  const [extList] = derChildren(exts.body);
  const names: string[] = [];
  for (const ext of derChildren(extList?.body ?? new Uint8Array())) {
    const parts = derChildren(ext.body);
    if (!parts[0] || hex(parts[0].body) !== SAN_OID) continue;
    const value = parts[parts.length - 1];
    const [seq] = derChildren(value.body);
    for (const gn of derChildren(seq?.body ?? new Uint8Array())) {
      if (gn.tag === 0x82) names.push(new TextDecoder().decode(gn.body).toLowerCase());
      else if (gn.tag === 0x87) names.push(ipText(gn.body));
    }
  }
  return names;
}

/** The validity, subject common name, names and serial number of a DER certificate. */
export interface DerCertificateFacts {
  /** Validity start. */
  notBefore: Date;
  /** Validity end. */
  notAfter: Date;
  /** The first common name of the subject ("" when none). */
  commonName: string;
  /** DNS names (lower case) and IPs of the subjectAltName. */
  names: string[];
  /** Serial number: the INTEGER's content bytes in hex, as written. */
  serial: string;
}

/** UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`). */
function derTime(n: DerNode): Date {
  const s = new TextDecoder().decode(n.body);
  const m = n.tag === 0x17
    ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s)
    : n.tag === 0x18
    ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(s)
    : null;
  if (!m) throw new Error("bad certificate validity time");
  let year = Number(m[1]);
  if (n.tag === 0x17) year += year < 50 ? 2000 : 1900;
  const ms = n.tag === 0x18 && s.includes(".")
    ? Math.floor(Number("0" + s.slice(s.indexOf("."), -1)) * 1000)
    : 0;
  return new Date(
    Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), ms),
  );
}

/** A directory string: UTF8String, PrintableString, IA5String, T61String, BMPString. */
function derString(n: DerNode): string {
  if (n.tag === 0x1e) {
    let s = "";
    for (let i = 0; i + 1 < n.body.length; i += 2) {
      s += String.fromCharCode((n.body[i] << 8) | n.body[i + 1]);
    }
    return s;
  }
  if (n.tag === 0x14) return String.fromCharCode(...n.body);
  return new TextDecoder().decode(n.body);
}

/**
 * Reads a DER certificate's validity, subject common name, subjectAltName DNS names and IPs,
 * and serial number, without an X.509 library (a server restarting with its certificates in
 * storage reads these of each one). Throws on bad DER.
 *
 * @example
 * ```ts ignore
 * import { certificateFactsOf, pemDecode } from "./der.ts";
 * certificateFactsOf(pemDecode(pem)[0].der).notAfter; // Date
 * ```
 */
export function certificateFactsOf(der: Uint8Array): DerCertificateFacts {
  const [cert] = derChildren(der);
  if (!cert || cert.tag !== 0x30) throw new Error("not a DER certificate");
  const [tbs] = derChildren(cert.body);
  if (!tbs || tbs.tag !== 0x30) throw new Error("not a DER certificate");
  const fields = derChildren(tbs.body);
  const at = fields[0]?.tag === 0xa0 ? 1 : 0; // [0] version, absent for v1
  const [serial, , , validity, subject] = fields.slice(at);
  if (serial?.tag !== 0x02 || validity?.tag !== 0x30 || subject?.tag !== 0x30) {
    throw new Error("not a DER certificate");
  }
  const [notBefore, notAfter] = derChildren(validity.body);
  if (!notBefore || !notAfter) throw new Error("bad certificate validity");
  const commonName = subjectCommonNames(subject)[0] ?? "";
  return {
    notBefore: derTime(notBefore),
    notAfter: derTime(notAfter),
    commonName,
    names: certificateNames(der),
    // without the zero byte that keeps a serial with its high bit set positive
    serial: hex(
      serial.body.length > 1 && serial.body[0] === 0 && serial.body[1] >= 0x80
        ? serial.body.subarray(1)
        : serial.body,
    ),
  };
}
