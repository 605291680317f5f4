/**
 * The admin API's `Etag` / `If-Match` on config paths that are not plain ASCII, against a real
 * `gatehouse run` process. Config keys are any JSON strings (server names, `@id`s, header
 * names); a `GET` of a path with a character above U+00FF answered 500 (the path was put in
 * the `Etag` as is, which a header cannot carry), and one with a space gave an `Etag` that
 * could never be sent back. The path in an `Etag` is now percent-encoded outside visible ASCII,
 * and `If-Match` decodes it: every `Etag` works as an `If-Match`, and a malformed one is 400.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";

Deno.test("admin API: Etags of non-ASCII config paths are valid headers and work as If-Match", async () => {
  const g = await startGatehouse({
    site: {
      routes: [{
        handle: [{ handler: "vars" }, { handler: "static_response", body: "hi" }],
      }],
    },
  });
  const api = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${g.admin}${path}`, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body,
    });
  try {
    // keys that are valid JSON, not valid in a header (or an Etag) as they are
    const keys = ["\u2603 snow", "caf\u00e9", "line\u2028sep", 'quo"te', "per%cent"];
    const site = "/config/apps/http/servers/site";
    for (const key of keys) {
      // a `vars` handler takes any key
      const path = `${site}/routes/0/handle/0/${encodeURIComponent(key)}`;
      const put = await api("PUT", path, {}, JSON.stringify(["v1"]));
      assert.equal(put.status, 200, `${key}: ${await put.text()}`);

      const r = await api("GET", path);
      assert.equal(r.status, 200, `${key}: ${await r.clone().text()}`);
      assert.deepEqual(await r.json(), ["v1"]);
      const etag = r.headers.get("etag")!;
      assert.match(etag, /^"[\x21-\x7e]+ [0-9a-f]{8}"$/, `${key}: ${etag}`);

      // the Etag, sent back, is the If-Match of this path: accepted while current, 412 after
      const ok = await api("PATCH", path, { "if-match": etag }, JSON.stringify(["v2"]));
      assert.equal(ok.status, 200, `${key}: ${await ok.text()}`);
      const stale = await api("PATCH", path, { "if-match": etag }, JSON.stringify(["v3"]));
      assert.equal(stale.status, 412, `${key}: ${await stale.text()}`);
      const now = await api("GET", path);
      assert.deepEqual(await now.json(), ["v2"], "a refused change changed nothing");
    }
    // an If-Match whose path is badly encoded is a 400 with a JSON error, nothing changed
    const bad = await api("POST", `${site}/routes/0/handle/1/body`, {
      "if-match": '"/config/%zz 00000000"',
    }, JSON.stringify("changed"));
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /If-Match/);
    const body = await api("GET", `${site}/routes/0/handle/1/body`);
    assert.equal(await body.json(), "hi");
  } finally {
    await g.stop();
  }
});
