/**
 * The interactive reference in headless Chromium, inside the reference app (its strict CSP
 * applies), with every request beyond loopback blocked: the page loads from our server alone,
 * lists every operation, and "try it" on `GET /items` with the sandbox key `deno task start`
 * prints returns 200 with the sample items; the page and everything it loads take under 1.5 MB
 * on the wire; on a 390 px phone the page is no wider than the screen. The screenshots are
 * decoded and must not be blank.
 */
import assert from "node:assert/strict";
import { HAVE_CHROMIUM, launch, shot } from "../e2e/_harness.ts";
import { PHONE } from "../e2e/_console.ts";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { mailSandboxLines } from "../../app/mail.ts";
import { openApiDocument } from "../../lib/mail/openapi.ts";
import { ResponseChecker } from "./_openapi.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // playwright's own pipes

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "reference: loads offline under the app's CSP, lists every operation, try it reaches the sandbox",
  ...opts,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-reference-" });
    const env = loadAppEnv({ DATABASE_URL: `file:${dir}/app.db`, MAIL_BLOB_DIR: `${dir}/blobs` });
    const app = await createApp(env);
    // what the browser gets from the mail API (the page, its scripts, the document, try it) is
    // checked against the OpenAPI document
    const mail = new ResponseChecker();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      mail.wrap(async (request, info) => await app.fetch(request, info)),
    );
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const key = (await mailSandboxLines(env, origin)).join("\n").match(/gh_test_\S+/)![0];
    const browser = await launch();
    try {
      const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      // the network beyond loopback is closed: anything else is recorded and refused
      const outside: string[] = [];
      const served: string[] = [];
      await ctx.route("**/*", (route) => {
        const url = new URL(route.request().url());
        if (url.hostname !== "127.0.0.1") {
          outside.push(url.href);
          return route.abort();
        }
        served.push(url.pathname);
        return route.continue();
      });
      const problems: string[] = [];
      await ctx.exposeBinding("__cspViolation", (_, text: string) => problems.push(`CSP ${text}`));
      await ctx.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e) => {
          // deno-lint-ignore no-explicit-any
          (globalThis as any).__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`);
        });
      });
      const page = await ctx.newPage();
      page.on("pageerror", (err) => problems.push(`page error ${err.message}`));
      const loads: Promise<{ url: string; bytes: number }>[] = [];
      page.on("requestfinished", (request) => {
        loads.push(
          request.sizes().then((sz) => ({
            url: request.url(),
            bytes: sz.responseBodySize + sz.responseHeadersSize,
          })),
        );
      });

      await page.goto(`${origin}/api/account-docs/v2/docs`);
      await page.waitForSelector('h1:has-text("Mail-scanning API")');
      await page.getByText("List the account's items", { exact: true }).first().waitFor();
      // the page on the wire: the renderer goes gzip-compressed, as stored
      const wire = await Promise.all(loads);
      const total = wire.reduce((n, l) => n + l.bytes, 0);
      assert.ok(wire.some((l) => l.url.endsWith("/docs/assets/reference.js")));
      assert.ok(total < 1_500_000, `${total} bytes: ${JSON.stringify(wire)}`);
      console.log(`reference page on the wire: ${total} bytes in ${wire.length} responses`);

      // every operation and webhook of the document is listed
      const doc = openApiDocument("/api/account-docs/v2") as unknown as {
        paths: Record<string, Record<string, { summary: string }>>;
        webhooks: Record<string, Record<string, { summary: string }>>;
      };
      const text = await page.locator("body").innerText();
      const summaries = [...Object.values(doc.paths), ...Object.values(doc.webhooks)]
        .flatMap((item) => Object.values(item).map((op) => op.summary));
      assert.ok(summaries.length > 30, `${summaries.length} operations`);
      const missing = summaries.filter((s) => !text.includes(s));
      assert.deepEqual(missing, []);

      // try it: the printed sandbox key, GET /items, Send
      // the key field shows the form of this API's keys, not Scalar's key-like placeholder
      assert.equal(
        await page.getByPlaceholder("QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT").count(),
        0,
      );
      await page.getByPlaceholder("gh_test_\u2026").first().fill(key);
      await page.getByText("List the account's items", { exact: true }).first().click();
      await page.locator("button.show-api-client-button[method=get]").first().click();
      const answer = page.waitForResponse((r) =>
        new URL(r.url()).pathname === "/api/account-docs/v2/items" &&
        r.request().method() === "GET"
      );
      await page.locator('button:has-text("Send get request to")').first().click();
      const res = await answer;
      assert.equal(res.status(), 200);
      assert.equal(res.request().headers()["x-api-key"], key);
      const body = await res.json();
      assert.equal(body.total, 3);
      await page.getByText("City Water Department").first().waitFor();
      await shot(page, "mail-reference-try-it");

      assert.deepEqual(outside, []);
      // The only violation allowed: the renderer's bundled Zod probes once whether eval works
      // (`try { Function("") } catch`) and, refused by the CSP, validates without it.
      assert.deepEqual(problems.filter((p) => p !== "CSP script-src blocked eval"), []);
      assert.ok(served.includes("/api/account-docs/v2/docs/assets/reference.js"));
      assert.ok(served.includes("/api/account-docs/v2/openapi.json"));
      mail.assertClean();
      for (const seen of ["GET /docs 200", "GET /openapi.json 200", "GET /items 200"]) {
        assert.ok(mail.seen.has(seen), `${seen} in ${[...mail.seen].join(", ")}`);
      }

      // on a 390 px phone: the reference, every section drawn, is no wider than the screen
      const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
      await phone.route(
        "**/*",
        (route) =>
          new URL(route.request().url()).hostname === "127.0.0.1"
            ? route.continue()
            : route.abort(),
      );
      const small = await phone.newPage();
      await small.goto(`${origin}/api/account-docs/v2/docs`);
      await small.waitForSelector('h1:has-text("Mail-scanning API")');
      // on a phone the operations fold under their tags: the last section, Models, is drawn
      await small.locator('h2:has-text("Models")').waitFor();
      const [wide, inner] = await small.evaluate(() => [
        Math.max(document.scrollingElement!.scrollWidth, document.documentElement.scrollWidth),
        innerWidth,
      ]);
      assert.equal(inner, PHONE.width, "the page lays out at the phone's width");
      assert.ok(wide <= PHONE.width, `the reference is ${wide} px wide on a ${inner} px phone`);
      await shot(small, "mail-reference-phone");
      await phone.close();
    } finally {
      await browser.close();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
