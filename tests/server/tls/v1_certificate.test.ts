/**
 * Self-signed X.509 v1 certificates (no extensions, as `openssl x509 -req` makes them without
 * `-extfile`; common in older setups and in Caddy's own tests). rustls, under `Deno.serve` and
 * Deno's QUIC endpoint, refuses them (`UnsupportedCertVersion`); node:tls (OpenSSL) serves
 * them, so a TLS server that may serve one runs on the node engine, and HTTP/3 is left out.
 * Caddy 2.6.2 (Go's crypto/tls) serves them: it is the oracle for the answers.
 */
import assert from "node:assert/strict";
import { freePort, until } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";
import { caddyAvailable } from "../parity2/caddy.ts";

const opensslAvailable = (() => {
  try {
    return new Deno.Command("openssl", { args: ["version"], stdout: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
})();

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${text}`);
  return text;
}

/** A self-signed v1 certificate for CN=localhost (no extensions), in `dir`. */
async function v1Certificate(dir: string): Promise<{ cert: string; key: string }> {
  const cert = `${dir}/v1.crt`;
  const key = `${dir}/v1.key`;
  const csr = `${dir}/v1.csr`;
  await run("openssl", [
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-subj",
    "/CN=localhost",
    "-out",
    csr,
  ]);
  await run("openssl", ["x509", "-req", "-in", csr, "-signkey", key, "-days", "30", "-out", cert]);
  const text = await run("openssl", ["x509", "-in", cert, "-noout", "-text"]);
  assert.match(text, /Version: 1 \(0x0\)/);
  return { cert, key };
}

function config(port: number, c: { cert: string; key: string }, server: Record<string, unknown>) {
  return {
    apps: {
      tls: { certificates: { load_files: [{ certificate: c.cert, key: c.key }] } },
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            // a host route: the deno engine asked for the certificate per handshake, so before
            // the node engine was chosen the load answered 200 and every handshake failed
            routes: [{
              match: [{ host: ["localhost"] }],
              handle: [{ handler: "static_response", body: "v1 {http.request.proto}" }],
            }],
            tls_connection_policies: [{}],
            automatic_https: { disable: true },
            ...server,
          },
        },
      },
    },
  };
}

/** What a client gets over TLS with the server name `localhost` (the certificate's CN). */
async function answers(port: number): Promise<string[]> {
  const body = await run("curl", [
    "-sk",
    "--resolve",
    `localhost:${port}:127.0.0.1`,
    `https://localhost:${port}/`,
  ]);
  const handshake = await new Deno.Command("openssl", {
    args: ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", "localhost"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const s = new TextDecoder().decode(handshake.stdout);
  return [
    body,
    /^subject=(.*)$/m.exec(s)?.[1]?.trim() ?? "no certificate",
    /^New, (TLSv[\d.]+),/m.exec(s)?.[1] ?? "no protocol",
  ];
}

async function runCaddy(config: unknown): Promise<() => Promise<void>> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-caddy-" });
  await Deno.writeTextFile(
    `${dir}/caddy.json`,
    JSON.stringify({
      admin: { disabled: true },
      storage: { module: "file_system", root: `${dir}/data` },
      ...config as Record<string, unknown>,
    }),
  );
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "null",
    env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
  }).spawn();
  return async () => {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  };
}

async function load(base: string, body: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(`${base}/load`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ logging: QUIET, ...body as Record<string, unknown> }),
  });
  return { status: r.status, text: await r.text() };
}

Deno.test({
  name: "an X.509 v1 certificate is served (node engine, chosen automatically), as Caddy 2.6.2",
  ignore: !caddyAvailable() || !opensslAvailable,
  async fn() {
    const [port, caddyPort] = [freePort(), freePort()];
    const s = await serve({ logging: QUIET }, ["--workers", "1"]);
    const c = await v1Certificate(s.dir);
    const stopCaddy = await runCaddy(config(caddyPort, c, {}));
    try {
      await up(s.base);
      const r = await load(s.base, config(port, c, {}));
      assert.equal(r.status, 200, r.text);
      const ours = await answers(port);
      let theirs: string[] = [];
      await until(async () => (theirs = await answers(caddyPort))[0] !== "", 15_000, "Caddy");
      assert.deepEqual(ours, theirs);
      assert.deepEqual(ours, ["v1 HTTP/2.0", "CN = localhost", "TLSv1.3"]);
    } finally {
      await stopCaddy();
      s.p.child.kill("SIGTERM");
      await finish(s.p, s.dir);
    }
  },
});

Deno.test({
  name: "an X.509 v1 certificate with listener_engine deno or protocols h3 is refused at load",
  ignore: !opensslAvailable,
  async fn() {
    const port = freePort();
    const s = await serve({ logging: QUIET }, ["--workers", "1"]);
    const c = await v1Certificate(s.dir);
    try {
      await up(s.base);
      const deno = await load(s.base, config(port, c, { listener_engine: "deno" }));
      assert.equal(deno.status, 400, deno.text);
      assert.match(
        JSON.parse(deno.text).error,
        /listener_engine: "deno" \(Deno.serve, rustls\) cannot serve X.509 v1 certificates \(UnsupportedCertVersion\), which tls.certificates.load_files\[0\] is/,
      );
      const h3 = await load(s.base, config(port, c, { protocols: ["h1", "h2", "h3"] }));
      assert.equal(h3.status, 400, h3.text);
      assert.match(
        JSON.parse(h3.text).error,
        /protocols: "h3" cannot be served here: Deno's QUIC endpoint \(rustls\) refuses X.509 v1 certificates/,
      );
      // nothing was left listening by the refused loads
      await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
    } finally {
      s.p.child.kill("SIGTERM");
      await finish(s.p, s.dir);
    }
  },
});
