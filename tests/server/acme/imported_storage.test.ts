/**
 * A server moved to another storage: the first `run` obtains its certificate from Pebble on a
 * `file_system` storage and stops; `storage export` writes that storage to a tarball and
 * `storage import` loads it into an empty `libsql` storage; a `run` on the imported storage
 * serves the same certificate (same serial) and Pebble sees no new order.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON, freePort } from "../fixtures/helpers.ts";
import { serve } from "../fixtures/process.ts";
import { servedCert } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, waitFor } from "./_server.ts";

const NAME = "moved.test";

Deno.test("storage export | import onto an empty storage: run on it serves the same certificate without ordering", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-moved-" });
  const config = (storage: Record<string, unknown>, https: number, log: string) => ({
    logging: fileLogging(log),
    storage,
    apps: {
      http: {
        http_port: freePort(),
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            automatic_https: { disable_redirects: true },
            routes: [{
              match: [{ host: [NAME] }],
              handle: [{ handler: "static_response", body: "moved" }],
            }],
          },
        },
      },
      tls: {
        automation: {
          policies: [{
            subjects: [NAME],
            issuers: [pebbleIssuer(pebble, {
              http: { alternate_port: pebble.httpPort },
              "tls-alpn": { disabled: true },
              bind_host: "127.0.0.1",
            })],
          }],
        },
      },
    },
  });
  const first = { module: "file_system", root: `${dir}/first` };
  const moved = { module: "libsql", url: `file:${dir}/moved.db` };
  const cli = async (args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", DENO_JSON, CLI, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  };
  const served = (port: number) =>
    waitFor(
      async () => {
        const c = await servedCert(port, NAME);
        return c?.names.includes(NAME) ? c : null;
      },
      60_000,
      `the certificate on ${port}`,
    );
  try {
    const port1 = freePort();
    const p1 = await serve(config(first, port1, `${dir}/first.log`));
    let serial = "";
    try {
      serial = (await served(port1)).serial;
    } finally {
      p1.p.child.kill("SIGTERM");
      await p1.p.status;
      await Deno.remove(p1.dir, { recursive: true });
    }
    assert.equal(pebble.orderCount(), 1);

    await Deno.writeTextFile(`${dir}/first.json`, JSON.stringify({ storage: first }));
    await Deno.writeTextFile(`${dir}/moved.json`, JSON.stringify({ storage: moved }));
    const exp = await cli(["storage", "export", "-c", `${dir}/first.json`, "-o", `${dir}/s.tar`]);
    assert.equal(exp.code, 0, exp.stderr);
    const imp = await cli(["storage", "import", "-c", `${dir}/moved.json`, "-i", `${dir}/s.tar`]);
    assert.equal(imp.code, 0, imp.stderr);

    const port2 = freePort();
    const log2 = `${dir}/moved.log`;
    const p2 = await serve(config(moved, port2, log2));
    try {
      assert.equal((await served(port2)).serial, serial, "the imported certificate");
      assert.equal(pebble.orderCount(), 1, "no new order");
      const obtained = (await logEntries(log2)).filter((e) =>
        e.msg === "certificate obtained successfully"
      );
      assert.deepEqual(obtained, []);
    } finally {
      p2.p.child.kill("SIGTERM");
      await p2.p.status;
      await Deno.remove(p2.dir, { recursive: true });
    }
  } finally {
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
