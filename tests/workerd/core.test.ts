/**
 * Runs the core's shared test cases (`tests/auth/core_cases/`) inside workerd, Cloudflare's
 * runtime, through Miniflare. The core is bundled from `mod.ts` with `deno bundle`; the worker
 * also enforces Cloudflare's production limit of 100,000 PBKDF2 iterations per call (local
 * workerd does not), so every case runs under it. The fake OAuth provider runs in Deno on
 * loopback and the worker reaches it with `fetch`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
// @ts-types="../auth/core_cases/index.d.ts"
import { cases } from "../auth/core_cases/index.mjs";
// @ts-types="../auth/_fake_provider.d.ts"
import { fakeProvider } from "../auth/_fake_provider.mjs";

const root = new URL("../../", import.meta.url);

async function bundleCore(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-workerd-" });
  try {
    const out = `${dir}/mod.js`;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "-o",
        out,
        new URL("mod.ts", root).pathname,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(success, new TextDecoder().decode(stderr));
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The shared case files as worker modules under `core_cases/`. */
async function caseModules(): Promise<{ type: "ESModule"; path: string; contents: string }[]> {
  const dir = new URL("tests/auth/core_cases/", root);
  const modules = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".mjs")) continue;
    const contents = await Deno.readTextFile(new URL(entry.name, dir));
    modules.push({ type: "ESModule" as const, path: `core_cases/${entry.name}`, contents });
  }
  return modules;
}

const WORKER = `
import * as api from "./mod.js";
import { cases } from "./core_cases/index.mjs";

// Cloudflare Workers refuse PBKDF2 above 100,000 iterations per call; workerd does not.
const deriveBits = SubtleCrypto.prototype.deriveBits;
SubtleCrypto.prototype.deriveBits = function (algorithm, key, length) {
  if (algorithm && algorithm.name === "PBKDF2" && algorithm.iterations > 100000) {
    return Promise.reject(new DOMException("iteration counts above 100000 are not supported", "NotSupportedError"));
  }
  return deriveBits.call(this, algorithm, key, length);
};

export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams;
    if (q.has("selftest")) {
      const key = await crypto.subtle.importKey("raw", new Uint8Array(8), "PBKDF2", false, ["deriveBits"]);
      const params = { name: "PBKDF2", hash: "SHA-256", salt: new Uint8Array(16) };
      await crypto.subtle.deriveBits({ ...params, iterations: 100000 }, key, 256);
      const refused = await crypto.subtle.deriveBits({ ...params, iterations: 100001 }, key, 256)
        .then(() => false, () => true);
      return Response.json({ ok: refused, error: "PBKDF2 above the cap was not refused" });
    }
    const c = cases[Number(q.get("case"))];
    try {
      await c.fn({ api, providerUrl: q.get("provider") ?? undefined });
      return Response.json({ ok: true });
    } catch (e) {
      return Response.json({ ok: false, error: String(e && e.stack || e) });
    }
  },
};
`;

Deno.test("core cases in workerd (Miniflare)", async (t) => {
  const provider = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, fakeProvider);
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: "worker.mjs", contents: WORKER },
      { type: "ESModule", path: "mod.js", contents: await bundleCore() },
      ...await caseModules(),
    ],
    compatibilityDate: "2025-09-01",
    compatibilityFlags: ["nodejs_compat"],
  });
  try {
    const providerUrl = `http://127.0.0.1:${provider.addr.port}`;
    await t.step("the worker refuses PBKDF2 above 100,000 iterations per call", async () => {
      const res = await mf.dispatchFetch("http://worker.test/?selftest");
      const result = await res.json() as { ok: boolean };
      assert.equal(result.ok, true);
    });
    for (const [i, c] of cases.entries()) {
      await t.step(c.name, async () => {
        const url = `http://worker.test/?case=${i}&provider=${encodeURIComponent(providerUrl)}`;
        const res = await mf.dispatchFetch(url);
        const result = await res.json() as { ok: boolean; error?: string };
        assert.ok(result.ok, result.error ?? "failed");
      });
    }
  } finally {
    await mf.dispose();
    await provider.shutdown();
  }
});
