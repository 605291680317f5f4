/**
 * A local stand-in for ZeroSSL's REST API (the network edge tests cannot reach), speaking the
 * real endpoints' shapes (ZeroSSL's API documentation, `github.com/caddyserver/zerossl`):
 *
 * - `POST /certificates` (JSON: `certificate_domains`, `certificate_csr`,
 *   `certificate_validity_days`, `strict_domains`) → a `draft` certificate object with
 *   `validation.other_methods[<name>]` (file URL and content from the CSR's MD5 and SHA-256,
 *   CNAME `_<md5>.<name>` → `<sha256 halves>.<unique>.sectigo.com`).
 * - `POST /certificates/<id>/challenges` (`validation_method`): checks each name for real —
 *   `HTTP_CSR_HASH` resolves the name through the DNS server given and fetches the file over a
 *   raw TCP connection to `httpPort` with the name as Host (ZeroSSL fetches port 80);
 *   `CNAME_CSR_HASH` asks the DNS server for the CNAME. Success: `pending_validation`, then
 *   `issued` from the next `GET /certificates/<id>`; failure:
 *   `domain_control_validation_failed` with per-name details.
 * - `GET /certificates/<id>`, `GET .../download/return`, `POST .../cancel`,
 *   `GET .../revoke?reason=`, `POST /acme/eab-credentials`, `POST /acme/eab-credentials-email`.
 * - Errors as the API sends them: HTTP 200 with `{"success": false, "error": {...}}`
 *   (`101 invalid_access_key` for a wrong `access_key`).
 *
 * Certificates are signed by a root and intermediate made here (`rootPem`).
 */
import { createHash } from "node:crypto";
import {
  generateKey,
  type KeyPair,
  makeIntermediate,
  makeLeaf,
  makeRoot,
  x509 as loadX509,
} from "../../../lib/server/pki/x509.ts";

/** One certificate the fake knows. */
export interface FakeCertificate {
  id: string;
  status: string;
  names: string[];
  validityDays: number;
  validation: Record<string, Record<string, unknown>>;
  method?: string;
  leafPem?: string;
  revokedReason?: string;
  /** Set once a GET has seen `pending_validation`. */
  polled?: boolean;
}

/** Options of the fake. */
export interface FakeZeroSslOptions {
  /** The access key it accepts. */
  apiKey: string;
  /** EAB credentials handed out by the two EAB endpoints. */
  eab?: { keyId: string; macKey: string };
  /** The port HTTP validation connects to (ZeroSSL's is 80). */
  httpPort: number;
  /** The DNS server names and CNAMEs are looked up on. */
  dns: { ipAddr: string; port: number };
  /** Listen on this port (to come back on the same address after a stop). */
  port?: number;
}

/** A running fake. */
export interface FakeZeroSsl {
  /** Base URL (`api_url`). */
  url: string;
  /** The listen port. */
  port: number;
  /** The root its certificates chain to. */
  rootPem: string;
  /** Requests seen: method, path, and whether a (right) access key came with it. */
  requests: { method: string; path: string; key: "none" | "good" | "bad" }[];
  /** Certificates by id. */
  certificates: Map<string, FakeCertificate>;
  /** E-mail addresses EAB credentials were asked for. */
  eabEmails: string[];
  /** Stops listening. */
  stop(): Promise<void>;
}

const enc = new TextEncoder();
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const apiError = (code: number, type: string, details?: unknown) =>
  json({ success: false, error: { code, type, ...(details ? { details } : {}) } });

function hex(n: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(n)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** GET over a raw connection (the Host header is the name, as a validator sends it). */
async function fetchFile(ip: string, port: number, host: string, path: string) {
  const conn = await Deno.connect({ hostname: ip, port });
  const timer = setTimeout(() => conn.close(), 5_000);
  try {
    await conn.write(
      enc.encode(
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: fake-zerossl-validator\r\n` +
          `Connection: close\r\n\r\n`,
      ),
    );
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(16384);
    let total = 0;
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      total += n;
      if (total > 65536) break;
    }
    const text = new TextDecoder().decode(
      chunks.reduce((a, c) => {
        const o = new Uint8Array(a.length + c.length);
        o.set(a);
        o.set(c, a.length);
        return o;
      }, new Uint8Array()),
    );
    const [head, ...rest] = text.split("\r\n\r\n");
    const status = Number(head.split(" ")[1]);
    let body = rest.join("\r\n\r\n");
    if (/transfer-encoding:\s*chunked/i.test(head)) {
      let out = "";
      let at = 0;
      for (;;) {
        const nl = body.indexOf("\r\n", at);
        const size = parseInt(body.slice(at, nl), 16);
        if (!size) break;
        out += body.slice(nl + 2, nl + 2 + size);
        at = nl + 2 + size + 2;
      }
      body = out;
    }
    return { status, body };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

/** Starts the fake on 127.0.0.1. */
export async function startFakeZeroSsl(options: FakeZeroSslOptions): Promise<FakeZeroSsl> {
  const x509 = await loadX509();
  const rootKey = await generateKey();
  const root = await makeRoot("Fake ZeroSSL Root", rootKey);
  const interKey: KeyPair = await generateKey();
  const inter = await makeIntermediate(
    "Fake ZeroSSL ECC Domain Secure Site CA",
    interKey,
    root.pem,
    rootKey,
  );
  const certificates = new Map<string, FakeCertificate>();
  const requests: FakeZeroSsl["requests"] = [];
  const eabEmails: string[] = [];

  const object = (c: FakeCertificate) => ({
    id: c.id,
    type: "1",
    common_name: c.names[0],
    additional_domains: c.names.slice(1).join(","),
    created: new Date().toISOString().slice(0, 19).replace("T", " "),
    expires: new Date(Date.now() + c.validityDays * 86_400_000).toISOString().slice(0, 19)
      .replace("T", " "),
    status: c.status,
    validation_type: c.method ?? null,
    validation_emails: null,
    replacement_for: "",
    fingerprint_sha1: null,
    brand_validation: null,
    validation: {
      email_validation: Object.fromEntries(c.names.map((n) => [n, [`admin@${n}`]])),
      other_methods: c.validation,
    },
  });

  async function create(body: Record<string, unknown>): Promise<Response> {
    const names = String(body.certificate_domains ?? "").split(",").map((n) => n.trim())
      .filter(Boolean);
    const pem = String(body.certificate_csr ?? "");
    let csr;
    try {
      csr = new x509.Pkcs10CertificateRequest(pem);
      if (!(await csr.verify())) throw new Error("signature");
    } catch {
      return apiError(2817, "invalid_certificate_csr");
    }
    const sanExt = csr.extensions.find((e) => e.type === "2.5.29.17");
    const csrNames = sanExt
      ? new x509.SubjectAlternativeNameExtension(sanExt.rawData).names.items.map((n) => n.value)
      : [];
    if (!names.length || names.some((n) => !csrNames.includes(n))) {
      return apiError(2821, "invalid_certificate_domains");
    }
    const der = new Uint8Array(csr.rawData);
    const md5 = createHash("md5").update(der).digest("hex").toUpperCase();
    const sha = createHash("sha256").update(der).digest("hex").toUpperCase();
    const unique = hex(5);
    const validation: FakeCertificate["validation"] = {};
    for (const n of names) {
      validation[n] = {
        file_validation_url_http: `http://${n}/.well-known/pki-validation/${md5}.txt`,
        file_validation_url_https: `https://${n}/.well-known/pki-validation/${md5}.txt`,
        file_validation_content: [sha, "sectigo.com", unique],
        // A wildcard is validated on its base name (and by CNAME only).
        cname_validation_p1: `_${md5}.${n.replace(/^\*\./, "")}`,
        cname_validation_p2: `${sha.slice(0, 32)}.${sha.slice(32)}.${unique}.sectigo.com`,
      };
    }
    const c: FakeCertificate = {
      id: hex(16),
      status: "draft",
      names,
      validityDays: Number(body.certificate_validity_days ?? 90) || 90,
      validation,
    };
    (c as FakeCertificate & { csr: typeof csr }).csr = csr;
    certificates.set(c.id, c);
    return json(object(c));
  }

  async function verify(c: FakeCertificate, method: string): Promise<Response> {
    if (c.status !== "draft") return apiError(2831, "certificate_not_draft");
    const details: Record<string, Record<string, unknown>> = {};
    for (const name of c.names) {
      const v = c.validation[name];
      if (method === "HTTP_CSR_HASH") {
        if (name.startsWith("*.")) return apiError(2837, "wildcard_needs_cname_validation");
        const url = new URL(v.file_validation_url_http as string);
        const want = (v.file_validation_content as string[]).join("\n");
        try {
          const [ip] = await Deno.resolveDns(name, "A", { nameServer: options.dns });
          const got = await fetchFile(ip, options.httpPort, name, url.pathname);
          if (got.status !== 200 || got.body.trim() !== want) {
            details[name] = {
              [url.href]: {
                file_found: got.status === 200 ? 1 : 0,
                error: true,
                error_slug: got.status === 200 ? "invalid_content" : "http_status",
                error_info: `HTTP ${got.status}`,
              },
            };
          }
        } catch (e) {
          details[name] = {
            [url.href]: {
              file_found: 0,
              error: true,
              error_slug: "connection_failed",
              error_info: (e as Error).message,
            },
          };
        }
      } else if (method === "CNAME_CSR_HASH") {
        const p1 = v.cname_validation_p1 as string;
        const p2 = (v.cname_validation_p2 as string).toLowerCase();
        // DNS names are case-insensitive; challtestsrv's lookups are not, so ask in lower case.
        const got = await Deno.resolveDns(p1.toLowerCase(), "CNAME", { nameServer: options.dns })
          .catch(() => []);
        const ok = got.some((t) => t.replace(/\.$/, "").toLowerCase() === p2);
        if (!ok) {
          details[name] = {
            [p1]: {
              cname_found: got.length ? 1 : 0,
              record_correct: 0,
              target_host: p1,
              target_record: p2,
              actual_record: got[0] ?? "",
            },
          };
        }
      } else {
        return apiError(2824, "invalid_validation_method");
      }
    }
    if (Object.keys(details).length) {
      return apiError(0, "domain_control_validation_failed", details);
    }
    c.method = method;
    c.status = "pending_validation";
    const csr = (c as FakeCertificate & { csr: InstanceType<typeof x509.Pkcs10CertificateRequest> })
      .csr;
    const leaf = await makeLeaf(
      c.names,
      await csr.publicKey.export(),
      inter.pem,
      interKey,
      c.validityDays * 86_400_000,
    );
    c.leafPem = leaf.pem;
    return json(object(c));
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const key = url.searchParams.get("access_key");
    const p = url.pathname;
    requests.push({
      method: req.method,
      path: p,
      key: key === null ? "none" : key === options.apiKey ? "good" : "bad",
    });
    if (p === "/acme/eab-credentials-email" && req.method === "POST") {
      const form = new URLSearchParams(await req.text());
      const email = form.get("email") ?? "";
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) return apiError(2900, "invalid_email_address");
      eabEmails.push(email);
      if (!options.eab) return apiError(2902, "failed_creating_eab_account");
      return json({ success: true, eab_kid: options.eab.keyId, eab_hmac_key: options.eab.macKey });
    }
    if (key !== options.apiKey) return apiError(101, "invalid_access_key");
    if (p === "/acme/eab-credentials" && req.method === "POST") {
      if (!options.eab) return apiError(2902, "failed_creating_eab_account");
      return json({ success: true, eab_kid: options.eab.keyId, eab_hmac_key: options.eab.macKey });
    }
    if (p === "/certificates" && req.method === "POST") {
      let body: Record<string, unknown>;
      try {
        body = await req.json();
      } catch {
        return apiError(115, "invalid_json_request");
      }
      return await create(body);
    }
    const m = /^\/certificates\/([0-9a-f]+)(\/[a-z/]+)?$/.exec(p);
    const c = m && certificates.get(m[1]);
    if (!m) return apiError(103, "invalid_api_function");
    if (!c) return apiError(2803, "certificate_not_found");
    const action = `${req.method} ${m[2] ?? ""}`;
    switch (action) {
      case "GET ":
        if (c.status === "pending_validation" && c.leafPem) {
          if (c.polled) c.status = "issued";
          c.polled = true;
        }
        return json(object(c));
      case "POST /challenges": {
        const body = await req.json().catch(() => ({}));
        return await verify(c, String(body.validation_method ?? ""));
      }
      case "GET /download/return":
        if (c.status !== "issued") return apiError(2832, "certificate_not_issued");
        return json({ "certificate.crt": c.leafPem, "ca_bundle.crt": inter.pem });
      case "POST /cancel":
        if (c.status !== "draft" && c.status !== "pending_validation") {
          return apiError(2833, "certificate_cannot_be_cancelled");
        }
        c.status = "cancelled";
        return json({ success: 1 });
      case "GET /revoke":
        if (c.status !== "issued") return apiError(2834, "certificate_not_issued");
        c.status = "revoked";
        c.revokedReason = url.searchParams.get("reason") ?? "unspecified";
        return json({ success: 1 });
      default:
        return apiError(103, "invalid_api_function");
    }
  }

  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    onListen() {},
  }, (req) => route(req).catch((e) => json({ error: String(e) }, 500)));
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    rootPem: root.pem,
    requests,
    certificates,
    eabEmails,
    stop: () => server.shutdown(),
  };
}
