/**
 * Go template semantics and Caddy's template functions side by side with Caddy 2.6.2: every
 * template of the corpus (_corpus.ts) is served by both through `templates` + `file_server`
 * over the same files, and the answers must be the same byte for byte: status, body, and
 * for a template that fails, the error log's message (Go's parse and execution messages).
 */
import assert from "node:assert/strict";
import { CORPUS, SUPPORT } from "./_corpus.ts";
import { askCaddy, askGatehouse, caddyInstalled, routes, writeTree } from "./_oracle.ts";

const ENV = "GATEHOUSE_TPL_TEST";

Deno.test({
  name: "templates: the corpus renders as Caddy 2.6.2 renders it, errors included",
  ignore: !caddyInstalled(),
  async fn() {
    const files: Record<string, string> = { ...SUPPORT };
    CORPUS.forEach((s, i) => files[`c${i}.html`] = s);
    const root = await writeTree(files);
    Deno.env.set(ENV, "tv");
    try {
      const asks = CORPUS.map((_, i) => ({
        path: `/c${i}.html?q=1`,
        headers: { "X-Test": "hello", Cookie: 'a=1; b="q"' },
      }));
      const r = routes(root);
      const [caddy, ours] = await Promise.all([
        askCaddy(root, r, asks, { [ENV]: "tv" }),
        askGatehouse(r, asks),
      ]);
      // the two servers listen on different ports; `.Req.Host` says so
      const norm = (s: string) => s.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT");
      const differ: string[] = [];
      CORPUS.forEach((src, i) => {
        const a = caddy[i];
        const b = ours[i];
        const same = a.status === b.status && norm(a.body) === norm(b.body) &&
          (a.error ?? "") === (b.error ?? "");
        if (!same) {
          differ.push(
            `${JSON.stringify(src)}\n  caddy: ${a.status} ${JSON.stringify(a.body)} ${
              a.error ?? ""
            }\n  ours:  ${b.status} ${JSON.stringify(b.body)} ${b.error ?? ""}`,
          );
        }
      });
      assert.deepEqual(differ, []);
      // the corpus exercises failures too: a good share of it must be errors
      assert.ok(caddy.filter((a) => a.status === 500).length > 40);
    } finally {
      Deno.env.delete(ENV);
      await Deno.remove(root, { recursive: true });
    }
  },
});
