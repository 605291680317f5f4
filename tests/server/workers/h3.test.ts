/**
 * HTTP/3 with worker processes: every worker binds the HTTPS port's UDP socket with
 * SO_REUSEPORT, so an HTTPS site on two workers starts, both workers answer over QUIC (our
 * client and Debian's gtlsclient) and both advertise HTTP/3 on their HTTP/1.1 answers; a killed worker's replacement serves HTTP/3
 * on the port too.
 */
import assert from "node:assert/strict";
import { call } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import { H3ClientConnection } from "../../../lib/server/listeners/h3/client.ts";
import { freeTcpUdpPort, gtlsclient, testPki, text } from "../listeners/h3/_h3.ts";
import { workerRoute, workers } from "./_workers.ts";

async function httpsSite(port: number) {
  const p = await testPki();
  return {
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [workerRoute("{http.request.proto}")],
          },
        },
      },
      tls: {
        certificates: {
          load_pem: [{ certificate: p.leafs.localhost.cert, key: p.leafs.localhost.key }],
        },
      },
    },
  };
}

/** One HTTP/3 request on a new QUIC connection (a new UDP source port): the worker, the body. */
async function h3Hit(port: number, ca: string): Promise<{ worker: string; body: string }> {
  const c = await H3ClientConnection.connect({
    hostname: "127.0.0.1",
    port,
    serverName: "localhost",
    caCerts: [ca],
  });
  try {
    const res = await c.request({ method: "GET", authority: `localhost:${port}`, path: "/" });
    const body = await text(res.body);
    return { worker: new Map(res.headers).get("x-worker") ?? "", body };
  } finally {
    c.close();
  }
}

/** One HTTP/1.1 request over TLS on a new connection, through curl: status line and fields. */
async function tlsHead(port: number, ca: string): Promise<Map<string, string>> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, ca);
    const out = await new Deno.Command("curl", {
      args: [
        "-sS",
        "-D",
        "-",
        "-o",
        "/dev/null",
        "--http1.1",
        "--max-time",
        "10",
        "--cacert",
        `${dir}/ca.pem`,
        "--resolve",
        `localhost:${port}:127.0.0.1`,
        `https://localhost:${port}/`,
      ],
      stdout: "piped",
    }).output();
    const fields = new Map<string, string>();
    for (const line of new TextDecoder().decode(out.stdout).split("\r\n").slice(1)) {
      const i = line.indexOf(":");
      if (i > 0) fields.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
    }
    return fields;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("workers: an HTTPS site on two workers serves HTTP/3 from both, both advertise it, and a replacement serves it", async () => {
  const p = await testPki();
  const port = freeTcpUdpPort();
  const s = await serve(await httpsSite(port), ["--workers", "2"]);
  try {
    await up(s.base);
    const byWorker = new Map<string, string>();
    for (let i = 0; i < 200 && byWorker.size < 2; i++) {
      const a = await h3Hit(port, p.caPem);
      byWorker.set(a.worker, a.body);
    }
    assert.deepEqual([...byWorker.keys()].sort(), ["1", "2"], s.p.output());
    assert.deepEqual([...byWorker.values()], ["HTTP/3.0", "HTTP/3.0"]);
    // an independent client too
    const g = await gtlsclient(port, "/");
    assert.equal(g.status, 200, g.output.slice(-1500));
    assert.equal(new TextDecoder().decode(g.body), "HTTP/3.0");
    // both workers' HTTP/1.1 answers name the port
    const advertised = new Map<string, string | undefined>();
    for (let i = 0; i < 200 && advertised.size < 2; i++) {
      const fields = await tlsHead(port, p.caPem);
      advertised.set(fields.get("x-worker") ?? "", fields.get("alt-svc"));
    }
    assert.deepEqual([...advertised.keys()].sort(), ["1", "2"]);
    for (const v of advertised.values()) assert.equal(v, `h3=":${port}"; ma=2592000`);
    // worker 1 killed: its replacement joins the port's UDP group and answers over HTTP/3
    const before = await workers(s.base);
    Deno.kill(before.find((w) => w.worker === 1)!.pid, "SIGKILL");
    let replaced = false;
    for (let i = 0; i < 400 && !replaced; i++) {
      const a = await h3Hit(port, p.caPem).catch(() => null);
      replaced = a?.worker === "1" && a.body === "HTTP/3.0";
    }
    assert.ok(replaced, "the replacement of worker 1 answered over HTTP/3");
    const after = await workers(s.base);
    assert.equal(after.find((w) => w.worker === 1)!.restarts, 1);
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
  }
});
