/**
 * The web server screens over HTTP against a real Gatehouse process (`cli.ts run` with an
 * admin endpoint): the config tree, an edit sent with `If-Match`, a concurrent edit meeting
 * 412 with both versions shown and nothing overwritten, a Gatehousefile previewed through
 * `/adapt` and loaded, upstream health and the local CA; an endpoint that is down said in words.
 */
import assert from "node:assert/strict";
import { listAudit } from "../../../d1.ts";
import { OWNER, post, signIn, startConsoleApp, startGatehouse, textOf } from "./_harness.ts";

const SRV = "apps/http/servers/srv0";

async function live(adminUrl: string, path: string): Promise<unknown> {
  const r = await fetch(`${adminUrl}/config/${path}`);
  return await r.json();
}

Deno.test("console server: browse, edit with If-Match, a concurrent edit gets 412 and overwrites nothing, load a Gatehousefile", async () => {
  const gh = await startGatehouse();
  const app = await startConsoleApp({ GATEHOUSE_ADMIN: gh.admin });
  try {
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const root = await b.get("/admin/server");
    assert.equal(root.status, 200);
    assert.match(
      textOf(root.body),
      new RegExp(`Connected to the admin endpoint at ${gh.adminUrl}`),
    );
    assert.ok(root.body.includes(`href="/admin/server?path=apps"`));
    const node = await b.get(`/admin/server?path=${SRV}/listen`);
    assert.match(textOf(node.body), new RegExp(`127\\.0\\.0\\.1:${gh.proxyPort}`));

    // An edit with the Etag the page was shown with.
    const page = await b.get(`/admin/server?path=${SRV}/routes/0/handle/0`);
    const etag = page.body.match(/name="etag" value="([^"]+)"/)![1].replace(/&quot;/g, '"');
    const edited = {
      handler: "reverse_proxy",
      upstreams: [{ dial: gh.upstream }],
      headers: { response: { set: { "X-Edited": ["by the console"] } } },
    };
    const saved = await post(b, "/admin/server/edit", page.body, {
      path: `${SRV}/routes/0/handle/0`,
      etag,
      value: JSON.stringify(edited),
    });
    assert.equal(saved.status, 303);
    assert.match(
      textOf((await b.get(saved.location!)).body),
      /Saved: the server runs the changed configuration/,
    );
    assert.deepEqual(await live(gh.adminUrl, `${SRV}/routes/0/handle/0`), edited);
    const res = await fetch(`http://127.0.0.1:${gh.proxyPort}/`);
    assert.equal(res.headers.get("x-edited"), "by the console");
    assert.equal(await res.text(), "hello from upstream");

    // Two operators open the same node; one saves first; the other meets 412.
    const at = `${SRV}/routes/0/handle/0/headers/response/set`;
    const mine = await b.get(`/admin/server?path=${at}`);
    const theirs = await b.get(`/admin/server?path=${at}`);
    const tag = (html: string) =>
      html.match(/name="etag" value="([^"]+)"/)![1].replace(/&quot;/g, '"');
    const first = await post(b, "/admin/server/edit", theirs.body, {
      path: at,
      etag: tag(theirs.body),
      value: JSON.stringify({ "X-Edited": ["by them"] }),
    });
    assert.equal(first.status, 303);
    const conflict = await post(b, "/admin/server/edit", mine.body, {
      path: at,
      etag: tag(mine.body),
      value: JSON.stringify({ "X-Edited": ["by me"] }),
    });
    assert.equal(conflict.status, 409);
    const words = textOf(conflict.body);
    assert.match(words, /Nothing was saved: this node changed on the server after you opened it/);
    assert.match(words, /Current version on the server/);
    assert.match(words, /by them/, "their version is shown");
    assert.match(words, /by me/, "my version is kept in the form");
    assert.deepEqual(await live(gh.adminUrl, at), { "X-Edited": ["by them"] });
    const resave = await post(b, "/admin/server/edit", conflict.body, {
      path: at,
      etag: tag(conflict.body),
      value: JSON.stringify({ "X-Edited": ["by me, after reading theirs"] }),
    });
    assert.equal(resave.status, 303, "a deliberate second save with the new Etag goes through");

    // Invalid JSON is refused in words, nothing sent.
    const broken = await post(b, "/admin/server/edit", mine.body, {
      path: at,
      etag: tag(mine.body),
      value: "[1,",
    });
    assert.equal(broken.status, 400);
    assert.match(textOf(broken.body), /Nothing was saved: the node is not valid JSON/);

    // A form without the node's Etag (empty or missing) is refused: never a save without
    // If-Match, which could overwrite a change made meanwhile.
    const current = await live(gh.adminUrl, at);
    for (const etag of ["", "  ", undefined]) {
      const blind = await post(b, "/admin/server/edit", mine.body, {
        path: at,
        ...(etag === undefined ? {} : { etag }),
        value: JSON.stringify({ "X-Edited": ["blindly"] }),
      });
      assert.equal(blind.status, 400);
      const said = textOf(blind.body);
      assert.match(said, /Nothing was saved: the form did not say which version of the node/);
      assert.match(said, /What you sent \(not saved\)/);
      assert.match(said, /blindly/);
      assert.ok(tag(blind.body), "the page offers the node with its current Etag");
      assert.deepEqual(await live(gh.adminUrl, at), current, "nothing was sent");
    }

    // A Gatehousefile: previewed as JSON through /adapt (nothing loaded), then loaded.
    const load = await b.get("/admin/server/load");
    const text = `{\n\tadmin 127.0.0.1:${gh.admin.split(":")[1]}\n}\n` +
      `http://127.0.0.1:${gh.proxyPort} {\n\tbind 127.0.0.1\n\trespond "loaded from a Gatehousefile"\n}\n`;
    const preview = await post(b, "/admin/server/load/preview", load.body, {
      format: "gatehousefile",
      text,
    });
    assert.equal(preview.status, 200);
    assert.match(textOf(preview.body), /Nothing is loaded until you say so/);
    // one name for the format and its adapter: Gatehousefile
    assert.match(load.body, /<option value="gatehousefile"[^>]*>Gatehousefile<\/option>/);
    assert.match(textOf(load.body), /written in the Caddyfile syntax/);
    assert.match(preview.body, /static_response/);
    assert.equal(
      await (await fetch(`http://127.0.0.1:${gh.proxyPort}/`)).text(),
      "hello from upstream",
    );
    const config = preview.body.match(/name="config" value="([^"]+)"/)![1]
      .replace(/&quot;/g, '"').replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
    const applied = await post(b, "/admin/server/load/apply", preview.body, { config });
    assert.match(textOf(applied.body), /The server runs the new configuration/);
    assert.equal(
      await (await fetch(`http://127.0.0.1:${gh.proxyPort}/`)).text(),
      "loaded from a Gatehousefile",
    );
    const bad = await post(b, "/admin/server/load/preview", load.body, {
      format: "gatehousefile",
      text: "{\n",
    });
    assert.equal(bad.status, 400);
    assert.match(textOf(bad.body), /The server could not read this config, so nothing was loaded/);

    const audit = await listAudit(app.db, { action: "server." });
    assert.ok(audit.ok);
    assert.deepEqual(audit.entries.map((e) => e.action), [
      "server.load",
      "server.config.patch",
      "server.config.conflict",
      "server.config.patch",
      "server.config.patch",
    ]);
  } finally {
    await app.close();
    await gh.close();
  }
});

Deno.test("console server: upstream health and the local CA; an unreachable endpoint is said in words", async () => {
  const gh = await startGatehouse();
  const app = await startConsoleApp({ GATEHOUSE_ADMIN: gh.admin });
  try {
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const status = await b.get("/admin/server/status");
    const words = textOf(status.body);
    assert.match(words, new RegExp(`${gh.upstream.replace(/\./g, "\\.")} Healthy 0 0`));
    assert.match(words, /Local certificate authority Id local/);
    assert.match(status.body, /-----BEGIN CERTIFICATE-----/);
    assert.match(status.body, /data-live="\/admin\/server\/status\/upstreams"/);
    const fragment = await b.get("/admin/server/status/upstreams");
    assert.match(textOf(fragment.body), /Upstreams of the reverse proxy/);
  } finally {
    await app.close();
    await gh.close();
  }
  const down = await startConsoleApp({ GATEHOUSE_ADMIN: "127.0.0.1:1" });
  try {
    const b = await signIn(down.origin, OWNER.email, OWNER.password);
    const page = await b.get("/admin/server");
    assert.equal(page.status, 502);
    assert.match(
      textOf(page.body),
      /Could not reach the server's admin endpoint at http:\/\/127\.0\.0\.1:1: nothing answered there/,
    );
    // the page does not also say it is connected
    assert.doesNotMatch(textOf(page.body), /Connected to the admin endpoint/);
    assert.match(
      textOf(page.body),
      /The admin endpoint: http:\/\/127\.0\.0\.1:1 \(GATEHOUSE_ADMIN\)/,
    );
  } finally {
    await down.close();
  }
});
