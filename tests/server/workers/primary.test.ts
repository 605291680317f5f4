/**
 * The primary process of worker processes serves no HTTP, so it loads neither the http app nor
 * TLS (the scripts V8 parsed in it, from its inspector), yet adapts a Caddyfile loaded through
 * its admin API for its workers; a primary started with `--inspect` keeps the debugger's
 * address to itself (its workers start without it).
 */
import assert from "node:assert/strict";
import { call, CLI, DENO_JSON, freePort, tempEnv } from "../fixtures/helpers.ts";
import { up } from "../fixtures/process.ts";
import { answersByWorker, siteWith } from "./_workers.ts";

/** The file URLs of the scripts V8 parsed in the process whose inspector is on `port`. */
async function parsedScripts(port: number): Promise<string[]> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  const urls: string[] = [];
  const enabled = Promise.withResolvers<void>();
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.method === "Debugger.scriptParsed") urls.push(m.params.url);
    // the answer comes after an event for every script parsed so far
    if (m.id === 1) enabled.resolve();
  };
  await new Promise((r) => (ws.onopen = r));
  ws.send(JSON.stringify({ id: 1, method: "Debugger.enable" }));
  await enabled.promise;
  const closed = new Promise((r) => (ws.onclose = r));
  ws.close();
  await closed;
  return urls.filter((u) => u.startsWith("file://")).map((u) => new URL(u).pathname);
}

Deno.test("workers: the primary loads neither the http app nor TLS, and adapts a Caddyfile for its workers", async () => {
  const t = await tempEnv();
  const port = freePort();
  const admin = freePort();
  const inspector = freePort();
  const file = `${t.dir}/config.json`;
  await Deno.writeTextFile(file, JSON.stringify(siteWith(port, "json")));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", DENO_JSON, `--inspect=127.0.0.1:${inspector}`, CLI]
      .concat(["run", "-c", file, "--workers", "2"]),
    env: { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${admin}` },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const output = new Response(child.stderr).text();
  const base = `http://127.0.0.1:${admin}`;
  try {
    await up(base);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["json", "json"]);
    const root = new URL("../../../", import.meta.url).pathname;
    const ours = (await parsedScripts(inspector)).filter((p) => p.startsWith(root))
      .map((p) => p.slice(root.length));
    assert.ok(ours.includes("lib/server/workers/primary.ts"), ours.join("\n"));
    const serving = ours.filter((p) =>
      /^lib\/server\/(http|tls|tracing|metrics\/mod|pki\/mod|standard)/.test(p)
    );
    assert.deepEqual(serving, [], "modules of serving loaded in the primary");

    // a Caddyfile, adapted by the primary, served by both workers
    const caddyfile = `http://127.0.0.1:${port} {
\theader X-Worker {env.GATEHOUSE_WORKER}
\trespond "from a Caddyfile"
}
`;
    const loaded = await call(base, "POST", "/load", caddyfile, {
      "content-type": "text/caddyfile",
    });
    assert.equal(loaded.status, 200, loaded.body);
    assert.deepEqual([...(await answersByWorker(port)).values()], [
      "from a Caddyfile",
      "from a Caddyfile",
    ]);
  } finally {
    await call(base, "POST", "/stop").catch(() => {});
    const status = await child.status;
    const text = await output;
    await Deno.remove(t.dir, { recursive: true });
    assert.equal(status.code, 0, text);
  }
});
