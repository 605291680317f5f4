/**
 * A client's GOAWAY must not take the server down. Deno's `node:http2` can abort the process
 * on one (denoland/deno#36788, see `lib/server/listeners/node/h2_frames.ts`); the node engine keeps
 * those frames from it. Here a real server process on the node engine serves 4 MiB over h2 to
 * Node clients that each close their session (GOAWAY) as the body ends, many times over (from a
 * file, and streamed from an upstream in 1 KiB pieces, which is what made it abort): the
 * process must still be running, have logged no abort, have served every byte, and still answer.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { makePki } from "./pki.ts";
import { nodeAvailable } from "../parity2/_h2_client.ts";
import { echoUpstream } from "../parity2/_h2_server.ts";

const SESSIONS = 240;
const SIZE = 4 * 1024 * 1024;

/**
 * Node client: `rounds` sessions in four parallel lines, each session one GET then close;
 * prints a summary.
 */
const CLIENT = `
import http2 from "node:http2";
const [origin, ca, rounds] = [process.argv[1], process.env.CA, Number(process.argv[2])];
const lengths = [];
let errors = 0;
const line = async (from) => { for (let k = from; k < rounds; k += 4) {
  const s = http2.connect(origin, { ca, servername: "localhost" });
  s.on("error", () => {});
  lengths.push(await new Promise((res) => {
    const st = s.request({ ":path": k % 8 === 7 ? "/big.bin" : "/big?n=4096" });
    let n = 0;
    st.on("data", (d) => (n += d.length));
    st.on("error", () => { errors++; s.destroy(); res(n); });
    st.on("end", () => { s.close(); res(n); });
  }));
} };
await Promise.all([0, 1, 2, 3].map(line));
// a request and the GOAWAY right after it: the request is answered, then the server ends the
// session (the client's close completes)
const last = http2.connect(origin, { ca, servername: "localhost" });
const closed = new Promise((r) => last.on("close", () => r(true)));
await new Promise((r) => last.on("connect", r));
const st = last.request({ ":path": "/big?n=64" });
last.close();
let tail = 0;
st.on("data", (d) => (tail += d.length));
await new Promise((r) => st.on("end", r));
const ended = await Promise.race([closed, new Promise((r) => setTimeout(() => r(false), 5000))]);
console.log(JSON.stringify({ lengths, errors, tail, ended }));
`;

Deno.test({
  name:
    "node engine h2: clients closing their sessions (GOAWAY) after large responses never abort the server",
  ignore: !nodeAvailable(),
  async fn() {
    const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
    const { dir, env } = await tempEnv();
    await Deno.mkdir(`${dir}/www`);
    await Deno.writeFile(`${dir}/www/big.bin`, new Uint8Array(SIZE).fill(97));
    const port = freePort();
    const up = echoUpstream(); // /big?n=4096 streams 4 MiB in 1 KiB chunks
    const config = {
      admin: { disabled: true },
      apps: {
        tls: {
          certificates: {
            load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }],
          },
        },
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              listener_engine: "node",
              tls_connection_policies: [{}],
              // no HTTP->HTTPS redirect listener on port 80 (other tests use it)
              automatic_https: { disable_redirects: true },
              routes: [
                {
                  match: [{ path: ["/big"] }],
                  handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] }],
                },
                { handle: [{ handler: "file_server", root: `${dir}/www` }] },
              ],
            },
          },
        },
      },
    };
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
    const srv = spawnCli(["run", "--config", `${dir}/config.json`], env);
    let exited: Deno.CommandStatus | false = false;
    srv.status.then((s) => (exited = s));
    try {
      // a loaded machine (the whole suite in parallel) can take a while to start a process
      await until(
        async () => {
          if (exited) return true;
          const c = await Deno.connect({ hostname: "127.0.0.1", port });
          c.close();
          return true;
        },
        90_000,
        "the server to listen",
      ).catch((e) => {
        throw new Error(`${e.message}\n${srv.output().slice(-2000)}`);
      });
      assert.equal(exited, false, `the server exited at start:\n${srv.output().slice(-2000)}`);
      const out = await new Deno.Command("node", {
        args: ["--input-type=module", "-e", CLIENT, `https://127.0.0.1:${port}`, String(SESSIONS)],
        env: { CA: pki.caPem },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      const { lengths, errors, tail, ended } = JSON.parse(text) as {
        lengths: number[];
        errors: number;
        tail: number;
        ended: boolean;
      };
      assert.equal(tail, 64 * 1024, "a request sent just before GOAWAY is answered");
      assert.equal(ended, true, "the session ends after the client's GOAWAY");
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(
        exited,
        false,
        `the server exited (${JSON.stringify(exited)}):\n${srv.output().slice(-2000)}`,
      );
      assert.doesNotMatch(srv.output(), /Assertion|Aborted|panicked/);
      assert.equal(errors, 0);
      assert.equal(lengths.length, SESSIONS);
      assert.deepEqual(lengths.filter((n) => n !== SIZE), [], "every session got the whole body");
      // and it still answers
      const again = await new Deno.Command("curl", {
        args: [
          "-sS",
          "--http2",
          "--cacert",
          "/dev/stdin",
          "-o",
          "/dev/null",
          "-w",
          "%{http_version} %{http_code} %{size_download}",
          "--resolve",
          `localhost:${port}:127.0.0.1`,
          `https://localhost:${port}/big.bin`,
        ],
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const w = again.stdin.getWriter();
      await w.write(new TextEncoder().encode(pki.caPem));
      await w.close();
      const res = await again.output();
      assert.equal(new TextDecoder().decode(res.stdout), `2 200 ${SIZE}`);
    } finally {
      if (!exited) {
        srv.child.kill("SIGTERM");
        await srv.status;
      }
      await up.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
