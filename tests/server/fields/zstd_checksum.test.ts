/**
 * `encode` zstd `checksum`: frames end with their XXH64 checksum unless `checksum` is false
 * (the Caddyfile's `disable_checksum`), on both compression paths (a file, compressed whole,
 * and a proxied stream of unknown length). Checked with the zstd command-line tool, a real
 * decoder: `zstd -lv` names the frame's check, `zstd -t` verifies it (and refuses a body whose
 * checksum was damaged, so the trailer is a real checksum and not four arbitrary bytes).
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";

const TEXT = Array.from({ length: 3000 }, (_, i) => `line ${i % 89} of text ${i % 7}\n`).join("");

/** The zstd tool's verdict on a frame: its check line and whether `zstd -t` passes. */
async function zstdTool(frame: Uint8Array): Promise<{ check: string; ok: boolean; out: string }> {
  const file = await Deno.makeTempFile({ suffix: ".zst" });
  try {
    await Deno.writeFile(file, frame);
    const list = await new Deno.Command("zstd", { args: ["-lv", file], stderr: "piped" }).output();
    const text = new TextDecoder().decode(list.stdout) + new TextDecoder().decode(list.stderr);
    const check = /Check:\s*(\S+)/.exec(text)?.[1] ?? `(none listed: ${text})`;
    const t = await new Deno.Command("zstd", { args: ["-t", "-q", file], stderr: "piped" })
      .output();
    const dec = await new Deno.Command("zstd", { args: ["-dc", file], stderr: "null" }).output();
    return { check, ok: t.success, out: new TextDecoder().decode(dec.stdout) };
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("fields: encode zstd checksum writes or leaves out the frame checksum", async () => {
  // A file (known length) takes the whole-body path.
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-zstd-" });
  await Deno.writeTextFile(`${dir}/text.txt`, TEXT);
  // A stream of unknown length (no Content-Length), from an upstream, takes the streaming path.
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const parts = [TEXT.slice(0, 20000), TEXT.slice(20000)].map((p) => new TextEncoder().encode(p));
    return new Response(
      new ReadableStream({
        pull(c) {
          const p = parts.shift();
          if (p) c.enqueue(p);
          else c.close();
        },
      }),
      { headers: { "content-type": "text/plain" } },
    );
  });
  const routes = (zstd: Record<string, unknown>) => [
    {
      match: [{ path: ["/stream"] }],
      handle: [
        { handler: "encode", encodings: { zstd } },
        { handler: "reverse_proxy", upstreams: [{ dial: `127.0.0.1:${upstream.addr.port}` }] },
      ],
      terminal: true,
    },
    {
      handle: [
        { handler: "encode", encodings: { zstd } },
        { handler: "rewrite", uri: "/text.txt" },
        { handler: "file_server", root: dir },
      ],
    },
  ];
  const srv = await startHttp({
    servers: {
      unset: { listen: ["127.0.0.1:0"], routes: routes({}) },
      on: { listen: ["127.0.0.1:0"], routes: routes({ checksum: true, level: "best" }) },
      off: { listen: ["127.0.0.1:0"], routes: routes({ checksum: false }) },
    },
  });
  try {
    for (const path of ["/whole", "/stream"]) {
      const frames: Record<string, Uint8Array> = {};
      for (const name of ["unset", "on", "off"]) {
        const r = await raw(srv.url(name), "GET", path, { "accept-encoding": "zstd" });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get("content-encoding"), "zstd", `${name} ${path}`);
        assert.equal(
          r.headers.has("content-length"),
          path === "/whole",
          `${path}: the path taken`,
        );
        frames[name] = r.body;
        const tool = await zstdTool(r.body);
        assert.equal(tool.ok, true, `${name} ${path}: zstd -t`);
        assert.equal(tool.out, TEXT, `${name} ${path}: decoded body`);
        assert.equal(tool.check, name === "off" ? "None" : "XXH64", `${name} ${path}: check`);
      }
      // a damaged checksum is caught by the decoder: the trailer is the body's checksum
      const bad = frames.on.slice();
      bad[bad.length - 1] ^= 0xff;
      assert.equal((await zstdTool(bad)).ok, false, `${path}: damaged checksum refused`);
    }
  } finally {
    await srv.stop();
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fields: encode zstd checksum must be a boolean", async () => {
  const { validateConfig } = await import("../../../lib/cli/validate.ts");
  const cfg = (zstd: unknown) => ({
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:1"],
            routes: [{ handle: [{ handler: "encode", encodings: { zstd } }] }],
          },
        },
      },
    },
  });
  await validateConfig(cfg({ checksum: false }));
  await assert.rejects(validateConfig(cfg({ checksum: "no" })), /zstd.*checksum/);
});
