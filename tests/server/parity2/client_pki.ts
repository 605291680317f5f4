/**
 * Client certificates for the mTLS tests, made at test time with @peculiar/x509: a trusted CA
 * and an untrusted one, an intermediate under the trusted CA, and client certificates signed
 * by each (one expired, one for servers only), plus a TLS client that sends a chosen
 * certificate with a chosen SNI and reads one HTTP/1.1 response.
 */
import tls from "node:tls";
import { makePki } from "../http/pki.ts";

const x509 = await import("@peculiar/x509");
const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

function pem(label: string, der: ArrayBuffer): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der))).replace(/.{64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64.replace(/\n$/, "")}\n-----END ${label}-----\n`;
}

interface Issuer {
  cert: InstanceType<typeof x509.X509Certificate>;
  keys: CryptoKeyPair;
  pem: string;
}

let serial = 100;

async function ca(name: string, parent?: Issuer): Promise<Issuer> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
  const ext = [
    new x509.BasicConstraintsExtension(true, 1, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
  ];
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const cert = parent
    ? await x509.X509CertificateGenerator.create({
      serialNumber: (serial++).toString(16).padStart(2, "0"),
      subject: `CN=${name}`,
      issuer: parent.cert.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: parent.keys.privateKey,
      signingAlgorithm: ALG,
      extensions: ext,
    })
    : await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: (serial++).toString(16).padStart(2, "0"),
      name: `CN=${name}`,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: ALG,
      extensions: ext,
    });
  return { cert, keys, pem: cert.toString("pem") + "\n" };
}

/** A client certificate and key (PEM), its DER and serial. */
export interface ClientCert {
  cert: string;
  key: string;
  der: Uint8Array;
  serial: bigint;
}

async function client(
  issuer: Issuer,
  cn: string,
  o: { expired?: boolean; serverOnly?: boolean; chain?: Issuer } = {},
): Promise<ClientCert> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
  const s = serial++;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: s.toString(16).padStart(2, "0"),
    subject: `CN=${cn}, O=Gatehouse Tests`,
    issuer: issuer.cert.subject,
    notBefore: new Date(Date.now() - (o.expired ? 7200_000 : 3600_000)),
    notAfter: new Date(Date.now() + (o.expired ? -3600_000 : 86_400_000)),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        o.serverOnly ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: `${cn}.clients.test` },
        { type: "email", value: `${cn}@clients.test` },
      ]),
    ],
  });
  const key = pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return {
    cert: cert.toString("pem") + "\n" + (o.chain ? o.chain.pem : ""),
    key,
    der: new Uint8Array(cert.rawData),
    serial: BigInt(s),
  };
}

/** Everything the mTLS tests need. */
export async function makeClientPki() {
  const server = await makePki({
    local: { dns: ["localhost", "secure.localhost"], ip: ["127.0.0.1"] },
  });
  const trusted = await ca("Trusted Client CA");
  const other = await ca("Other Client CA");
  const inter = await ca("Trusted Client Intermediate", trusted);
  return {
    server,
    trustedCaPem: trusted.pem,
    trustedCaDerB64: btoa(String.fromCharCode(...new Uint8Array(trusted.cert.rawData))),
    otherCaPem: other.pem,
    good: await client(trusted, "alice"),
    good2: await client(trusted, "bob"),
    viaIntermediate: await client(inter, "carol", { chain: inter }),
    untrusted: await client(other, "mallory"),
    expired: await client(trusted, "old", { expired: true }),
    serverOnly: await client(trusted, "srv", { serverOnly: true }),
  };
}

/** What a TLS request got: the status and body, or "refused" when the connection ended first. */
export type TlsAnswer = { status: number; body: string } | "refused";

/** GET `path` over TLS with SNI `servername`, optionally sending a client certificate. */
export function tlsGet(
  port: number,
  o: { servername?: string; ca: string; cert?: ClientCert; path?: string },
): Promise<TlsAnswer> {
  return new Promise((resolve) => {
    let data = "";
    let settled = false;
    const done = (v: TlsAnswer) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(v);
      }
    };
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      servername: o.servername ?? "localhost",
      ca: o.ca,
      ...(o.cert ? { cert: o.cert.cert, key: o.cert.key } : {}),
      ALPNProtocols: ["http/1.1"],
    });
    const timer = setTimeout(() => {
      socket.destroy();
      done("refused");
    }, 10_000);
    socket.on("secureConnect", () => {
      socket.write(
        `GET ${o.path ?? "/"} HTTP/1.1\r\nHost: ${
          o.servername ?? "localhost"
        }\r\nConnection: close\r\n\r\n`,
      );
    });
    socket.on("data", (d: Uint8Array) => (data += new TextDecoder().decode(d)));
    const finish = () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (!m) return done("refused");
      const body = data.slice(data.indexOf("\r\n\r\n") + 4);
      done({ status: Number(m[1]), body });
    };
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", () => finish());
  });
}
