/**
 * Pebble (Let's Encrypt's test ACME server) and pebble-challtestsrv (its DNS, answering every
 * name with 127.0.0.1) started on free loopback ports for one test, and stopped by it.
 *
 * Pebble validates HTTP-01 on `httpPort` and TLS-ALPN-01 on `tlsPort` (chosen here, free),
 * issues certificates valid for `validitySeconds`, never sleeps before validating and never
 * rejects a good nonce.
 */
import { x509 as loadX509 } from "../../../lib/server/pki/x509.ts";
import { freePort } from "../fixtures/helpers.ts";

/** A running Pebble. */
export interface Pebble {
  /** ACME directory URL. */
  directory: string;
  /** The PEM root Pebble's own HTTPS listener is signed with (for `trusted_roots_pem_files`). */
  tlsRootFile: string;
  /** Port Pebble sends HTTP-01 validation requests to. */
  httpPort: number;
  /** Port Pebble makes TLS-ALPN-01 handshakes on. */
  tlsPort: number;
  /** challtestsrv's DNS server (`127.0.0.1:<port>`), which Pebble resolves names with. */
  dnsAddress: string;
  /** challtestsrv's management API base URL (`/set-txt`, `/clear-txt` ...). */
  dnsManagement: string;
  /** Pebble's issuing root (PEM), to verify issued chains; `n` picks an alternate root. */
  issuingRoot(n?: number): Promise<string>;
  /** Revocation status of a certificate by serial (hex): "Valid" or "Revoked". */
  certStatus(serialHex: string): Promise<string>;
  /** Number of orders Pebble accepted so far (its "Added order" log lines). */
  orderCount(): number;
  /** Pebble's log so far. */
  log(): string;
  /** Makes DNS answer nothing for `name` (its validations then fail) or 127.0.0.1 again. */
  setDnsFail(name: string, fail: boolean): Promise<void>;
  /** Stops both processes and removes the temp files. */
  stop(): Promise<void>;
}

async function tlsFiles(dir: string): Promise<{ cert: string; key: string }> {
  const x509 = await loadX509();
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=pebble test listener",
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
      ]),
    ],
  });
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const b64 = btoa(String.fromCharCode(...pkcs8)).replace(/.{64}/g, "$&\n");
  const certFile = `${dir}/pebble.crt`;
  const keyFile = `${dir}/pebble.key`;
  await Deno.writeTextFile(certFile, cert.toString("pem"));
  await Deno.writeTextFile(
    keyFile,
    `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`,
  );
  return { cert: certFile, key: keyFile };
}

function collect(stream: ReadableStream<Uint8Array>, into: { text: string }): void {
  (async () => {
    const dec = new TextDecoder();
    for await (const chunk of stream) into.text += dec.decode(chunk, { stream: true });
  })().catch(() => {});
}

/** Pebble options: certificate validity and EAB keys. */
export interface PebbleOptions {
  validitySeconds?: number;
  eab?: Record<string, string>;
  /** Validation ports to use (another Pebble's, so one client answers both). */
  httpPort?: number;
  tlsPort?: number;
  /** Alternate chains offered with each certificate (Pebble's PEBBLE_ALTERNATE_ROOTS). */
  alternateRoots?: number;
  /** Intermediates in each chain (PEBBLE_CHAIN_LENGTH counts the root too; default 2). */
  chainLength?: number;
}

/**
 * Starts Pebble and its DNS on free ports (tries again with other ports when one was taken
 * between choosing and binding).
 */
export async function startPebble(options: PebbleOptions = {}): Promise<Pebble> {
  for (let i = 0;; i++) {
    try {
      return await startOnce(options);
    } catch (e) {
      if (i >= 2 || !/address already in use/.test(String(e))) throw e;
    }
  }
}

async function startOnce(options: PebbleOptions): Promise<Pebble> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-pebble-" });
  const files = await tlsFiles(dir);
  const [listen, mgmt, freeHttp, freeTls, dns, dnsMgmt] = Array.from({ length: 6 }, freePort);
  const httpPort = options.httpPort ?? freeHttp;
  const tlsPort = options.tlsPort ?? freeTls;
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${listen}`,
      managementListenAddress: `127.0.0.1:${mgmt}`,
      certificate: files.cert,
      privateKey: files.key,
      httpPort,
      tlsPort,
      ocspResponderURL: "",
      externalAccountBindingRequired: !!options.eab,
      externalAccountMACKeys: options.eab ?? {},
      certificateValidityPeriod: options.validitySeconds ?? 7776000,
    },
  };
  await Deno.writeTextFile(`${dir}/pebble.json`, JSON.stringify(config));
  const chall = new Deno.Command("pebble-challtestsrv", {
    args: [
      "-dns01",
      `127.0.0.1:${dns}`,
      "-http01",
      "",
      "-https01",
      "",
      "-tlsalpn01",
      "",
      "-management",
      `127.0.0.1:${dnsMgmt}`,
      "-defaultIPv4",
      "127.0.0.1",
      "-defaultIPv6",
      "",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const out = { text: "" };
  const pebble = new Deno.Command("pebble", {
    args: ["-config", `${dir}/pebble.json`, "-dnsserver", `127.0.0.1:${dns}`, "-strict=false"],
    env: {
      PEBBLE_VA_NOSLEEP: "1",
      PEBBLE_WFE_NONCEREJECT: "0",
      PEBBLE_AUTHZREUSE: "0",
      PEBBLE_ALTERNATE_ROOTS: String(options.alternateRoots ?? 0),
      PEBBLE_CHAIN_LENGTH: String(options.chainLength ?? 2),
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  collect(pebble.stdout, out);
  collect(pebble.stderr, out);
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(files.cert)] });
  const directory = `https://127.0.0.1:${listen}/dir`;
  const stop = async () => {
    for (const p of [pebble, chall]) {
      try {
        p.kill("SIGTERM");
      } catch { /* gone */ }
      await p.status;
    }
    client.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const r = await fetch(directory, { client });
      await r.body?.cancel();
      const d = await fetch(`http://127.0.0.1:${dnsMgmt}/`, {}).catch(() => null);
      await d?.body?.cancel();
      if (r.ok && d) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pebble did not start:\n${out.text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    directory,
    tlsRootFile: files.cert,
    httpPort,
    tlsPort,
    dnsAddress: `127.0.0.1:${dns}`,
    dnsManagement: `http://127.0.0.1:${dnsMgmt}`,
    async issuingRoot(n = 0) {
      const r = await fetch(`https://127.0.0.1:${mgmt}/roots/${n}`, { client });
      return await r.text();
    },
    async certStatus(serial) {
      const r = await fetch(`https://127.0.0.1:${mgmt}/cert-status-by-serial/${serial}`, {
        client,
      });
      const body = await r.json() as { Status: string };
      return body.Status;
    },
    orderCount: () => out.text.split("\n").filter((l) => l.includes("Added order")).length,
    log: () => out.text,
    async setDnsFail(name, fail) {
      const host = name.endsWith(".") ? name : `${name}.`;
      const r = fail
        ? await fetch(`http://127.0.0.1:${dnsMgmt}/set-servfail`, {
          method: "POST",
          body: JSON.stringify({ host }),
        })
        : await fetch(`http://127.0.0.1:${dnsMgmt}/clear-servfail`, {
          method: "POST",
          body: JSON.stringify({ host }),
        });
      await r.body?.cancel();
      if (!r.ok) throw new Error(`challtestsrv: ${r.status}`);
    },
    stop,
  };
}
