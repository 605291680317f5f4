/**
 * The deno engine's two kinds of TLS listener, told apart from the outside. When one
 * certificate answers every name (it covers every host the routes serve, no on-demand policy,
 * nothing still to obtain), the listener holds it: clients resume their TLS sessions, and a
 * client asking for a name no certificate covers and no route serves gets that certificate too.
 * When the answer depends on the name, Deno's resolver picks per server name: no session
 * resumption, and a name without a certificate fails the handshake (as Caddy). Reloads move a
 * listener from one kind to the other on the same port.
 */
import assert from "node:assert/strict";
import { generateKey, makeRoot } from "../../../lib/server/pki/x509.ts";
import { freePort, leaf, tlsServer } from "./_helpers.ts";

const dec = new TextDecoder();

/** One handshake with openssl (optionally saving or offering a session): what it got. */
async function handshake(
  port: number,
  serverName: string,
  session?: { out?: string; in?: string },
): Promise<{ ok: boolean; reused: boolean; subjectAltNames: string }> {
  const args = ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", serverName];
  if (session?.out) args.push("-sess_out", session.out);
  if (session?.in) args.push("-sess_in", session.in);
  const p = new Deno.Command("openssl", { args, stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  // TLS 1.3 tickets come after the handshake: stay a moment before closing
  const w = p.stdin.getWriter();
  await new Promise((r) => setTimeout(r, 300));
  await w.close();
  const out = dec.decode((await p.output()).stdout);
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(out)?.[0];
  let names = "";
  if (pem) {
    const x = new Deno.Command("openssl", {
      args: ["x509", "-noout", "-ext", "subjectAltName"],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const xw = x.stdin.getWriter();
    await xw.write(new TextEncoder().encode(pem));
    await xw.close();
    names = dec.decode((await x.output()).stdout).split("\n").slice(1).join(" ").trim();
  }
  return {
    ok: /^(New|Reused),/m.test(out) && !!pem,
    reused: /^Reused,/m.test(out),
    subjectAltNames: names,
  };
}

function config(
  port: number,
  pems: { certificate: string; key: string }[],
  extra: Record<string, unknown> = {},
) {
  return {
    apps: {
      tls: { certificates: { load_pem: pems }, ...extra },
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [{ handle: [{ handler: "static_response", body: "hi" }] }],
          },
        },
      },
    },
  };
}

Deno.test("tls (deno engine): one certificate for every name is held by the listener (sessions resume); names chosen per SNI after a reload adds a second", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("Fixed Listener Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test", "b.test"]);
  const c = await leaf(ca, caKey, ["c.test"]);
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const srv = await tlsServer(config(port, [a]));
  try {
    // one certificate: held by the listener, sessions resume
    const first = await handshake(port, "a.test", { out: `${dir}/s1` });
    assert.ok(first.ok && !first.reused);
    assert.match(first.subjectAltNames, /DNS:a\.test/);
    const again = await handshake(port, "a.test", { in: `${dir}/s1` });
    assert.ok(again.ok && again.reused, "the session was resumed");
    const other = await handshake(port, "b.test");
    assert.ok(other.ok);
    assert.match(other.subjectAltNames, /DNS:b\.test/);
    // a name no certificate covers gets the one certificate (the client's name check fails)
    const unknown = await handshake(port, "nobody.test");
    assert.ok(unknown.ok);
    assert.match(unknown.subjectAltNames, /DNS:a\.test/);

    // a second certificate: the certificate depends on the name (Deno's resolver)
    assert.ok(await srv.load(config(port, [a, c])));
    let cGot = await handshake(port, "c.test");
    for (let i = 0; i < 20 && !/DNS:c\.test/.test(cGot.subjectAltNames); i++) {
      await new Promise((r) => setTimeout(r, 100));
      cGot = await handshake(port, "c.test");
    }
    assert.match(cGot.subjectAltNames, /DNS:c\.test/);
    const aGot = await handshake(port, "a.test", { out: `${dir}/s2` });
    assert.match(aGot.subjectAltNames, /DNS:a\.test/);
    const aAgain = await handshake(port, "a.test", { in: `${dir}/s2` });
    assert.ok(aAgain.ok && !aAgain.reused, "no resumption with per-name choice");
    assert.equal((await handshake(port, "nobody.test")).ok, false, "unknown name: handshake fails");

    // back to one certificate: held by the listener again
    assert.ok(await srv.load(config(port, [c])));
    let back = await handshake(port, "nobody.test");
    for (let i = 0; i < 20 && !back.ok; i++) {
      await new Promise((r) => setTimeout(r, 100));
      back = await handshake(port, "nobody.test");
    }
    assert.match(back.subjectAltNames, /DNS:c\.test/);
    const s3 = await handshake(port, "c.test", { out: `${dir}/s3` });
    assert.ok((await handshake(port, "c.test", { in: `${dir}/s3` })).reused && s3.ok);
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls (deno engine): with an on-demand policy the certificate is chosen per name even when one is loaded", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("Fixed Listener Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test"]);
  const port = freePort();
  // on demand, but the ask endpoint refuses every name: nothing is ever obtained
  const ask = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("no", { status: 403 }),
  );
  const srv = await tlsServer(config(port, [a], {
    automation: {
      on_demand: { ask: `http://127.0.0.1:${ask.addr.port}/ask` },
      policies: [{
        subjects: ["*.other.test"],
        on_demand: true,
        issuers: [{ module: "internal" }],
      }],
    },
  }));
  try {
    assert.match((await handshake(port, "a.test")).subjectAltNames, /DNS:a\.test/);
    assert.equal((await handshake(port, "x.other.test")).ok, false);
  } finally {
    await srv.stop();
    await ask.shutdown();
  }
});

Deno.test("tls (deno engine): one certificate that does not cover every name the routes serve is chosen per name", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("Fixed Listener Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test"]);
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const cfg = config(port, [a]);
  // the routes serve a.test and z.test; the one certificate covers a.test only
  (cfg.apps.http.servers.srv0 as Record<string, unknown>).routes = ["a.test", "z.test"].map(
    (h) => ({ match: [{ host: [h] }], handle: [{ handler: "static_response", body: h }] }),
  );
  const srv = await tlsServer(cfg);
  try {
    const first = await handshake(port, "a.test", { out: `${dir}/s` });
    assert.match(first.subjectAltNames, /DNS:a\.test/);
    assert.equal((await handshake(port, "a.test", { in: `${dir}/s` })).reused, false);
    assert.equal(
      (await handshake(port, "z.test")).ok,
      false,
      "as Caddy: no certificate for z.test",
    );
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls (node engine): one certificate answers every handshake without the SNI callback; per name again once a second one is loaded", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("Fixed Listener Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test"]);
  const c = await leaf(ca, caKey, ["c.test"]);
  const port = freePort();
  const node = (pems: { certificate: string; key: string }[]) => {
    const cfg = config(port, pems);
    (cfg.apps.http.servers.srv0 as Record<string, unknown>).listener_engine = "node";
    return cfg;
  };
  const srv = await tlsServer(node([a]));
  try {
    assert.match((await handshake(port, "a.test")).subjectAltNames, /DNS:a\.test/);
    const unknown = await handshake(port, "nobody.test");
    assert.ok(unknown.ok, "one certificate: every name gets it");
    assert.match(unknown.subjectAltNames, /DNS:a\.test/);
    assert.ok(await srv.load(node([a, c])));
    let cGot = await handshake(port, "c.test");
    for (let i = 0; i < 20 && !/DNS:c\.test/.test(cGot.subjectAltNames); i++) {
      await new Promise((r) => setTimeout(r, 100));
      cGot = await handshake(port, "c.test");
    }
    assert.match(cGot.subjectAltNames, /DNS:c\.test/);
    assert.match((await handshake(port, "a.test")).subjectAltNames, /DNS:a\.test/);
    assert.equal((await handshake(port, "nobody.test")).ok, false, "per name: unknown fails");
  } finally {
    await srv.stop();
  }
});
