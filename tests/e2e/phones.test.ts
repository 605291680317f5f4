/**
 * Every page of the reference app outside the console (whose screens `console_screens.test.ts`
 * checks the same way) on a 390 px phone in Chromium: nothing wider than the screen
 * (`document.scrollingElement.scrollWidth <= innerWidth`), the outbox's long links included.
 * The pages that were left plain (the development identity provider and its consent form, the
 * outbox, the broker, the 404s, the verify page's way to the outbox, the sign-in page after a
 * sign-out) are in the app's look and pass axe-core with nothing serious; the console's header
 * holds on one line at 1280 px, and its tables become one card per row on a phone, every column
 * named, nothing cut off, and no row of a card (a column's label and its value) taller than two
 * lines of its text (the users table's values, an e-mail address included, hold on one).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { HAVE_CHROMIUM, launch, startApp, where } from "./_harness.ts";
import { axeCheck, consoleShot, PHONE } from "./_console.ts";
import { Browser, newUser } from "./_users_site.ts";
import { OWNER } from "../app/console/_harness.ts";
import { DEV_CLIENT_ID } from "../../app/dev_idp.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Fails when the page is wider than its window. */
async function fits(page: Page, what: string): Promise<void> {
  const [wide, inner] = await page.evaluate(() => [
    document.scrollingElement!.scrollWidth,
    innerWidth,
  ]);
  assert.ok(wide <= inner, `${what} is ${wide} px wide in a ${inner} px window`);
}

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "e2e phones: every page fits a 390 px phone; the finished pages pass axe; the console's header and tables",
  ...opts,
  async fn(t) {
    const app = await startApp();
    const browser = await launch();
    try {
      // mail in the outbox: a verification code and a reset link (a long URL)
      const http = new Browser(app.origin);
      await newUser(http, "ada@example.com", "correct horse battery staple");
      const forgot = await fetch(`${app.origin}/users/api/auth/forgot`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ email: "ada@example.com" }),
      });
      await forgot.body?.cancel();
      const consent = `/dev-idp/github/login/oauth/authorize?client_id=${DEV_CLIENT_ID}` +
        `&redirect_uri=${
          encodeURIComponent(`${app.origin}/users/api/auth/oauth/github/callback`)
        }` +
        "&response_type=code&state=s&code_challenge=c&code_challenge_method=S256";
      // [path, checked with axe: the pages that were left plain]
      const pages: [string, boolean][] = [
        ["/", false],
        ["/nope", true],
        ["/users/nope", true],
        ["/owner/login", false],
        ["/users/login", false],
        ["/users/signup", false],
        ["/users/verify?email=ada%40example.com", true],
        ["/users/forgot", false],
        ["/users/forgot?sent=1", false],
        ["/users/reset?token=not-a-token", false],
        ["/users/outbox", true],
        ["/broker/", true],
        ["/relay-demo/api/auth/login", false],
        ["/dev-idp/", true],
        [consent, true],
        ["/admin/login", false],
        // the broker asks which provider (no provider in the site's request) or refuses
        ["/relay-demo/api/auth/relay/start", true],
        ["/broker/start?site=nope", true],
        // the development identity provider refuses a request from an unknown client
        ["/dev-idp/github/login/oauth/authorize?client_id=nope", true],
      ];
      const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
      const page = await phone.newPage();
      for (const [path, axe] of pages) {
        await t.step(path, async () => {
          const res = await page.goto(app.origin + path);
          assert.ok(res, path);
          await fits(page, path);
          if (axe) await axeCheck(page, `${path} (phone)`);
          const name = "phone-" +
            (path.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "") || "home");
          await consoleShot(page, name.slice(0, 60));
        });
      }

      await t.step(
        "the 404 of a browser is a page of the app; an API client gets words",
        async () => {
          const res = await page.goto(`${app.origin}/users/nope`);
          assert.equal(res?.status(), 404);
          assert.equal(await page.title(), "Page not found · Gatehouse demo");
          assert.ok(await page.getByRole("link", { name: /Multi-user/ }).count() > 0);
          const plain = await fetch(`${app.origin}/nope`);
          assert.equal(await plain.text(), "404 Not Found");
        },
      );

      await t.step("the broker's choice and refusals, the identity provider's", async () => {
        await page.goto(`${app.origin}/relay-demo/api/auth/relay/start`);
        assert.match(where(page), /^\/broker\/start\?site=relay-demo&/);
        assert.equal(await page.locator("h1").textContent(), "Sign in to Relay demo");
        assert.ok(await page.getByRole("link", { name: "Continue with GitHub" }).count() > 0);
        const refused = await page.goto(`${app.origin}/broker/start?site=nope`);
        assert.equal(refused?.status(), 400);
        assert.equal(await page.locator("h1").textContent(), "Sign-in refused");
        const wrong = await page.goto(
          `${app.origin}/dev-idp/github/login/oauth/authorize?client_id=nope`,
        );
        assert.equal(wrong?.status(), 400);
        assert.match(await page.getByRole("alert").innerText(), /The sign-in request is wrong/);
      });

      await t.step("the outbox: its links are links, the longest wraps", async () => {
        await page.goto(`${app.origin}/users/outbox`);
        const link = page.locator("pre.text a[href*='/users/reset?token=']").first();
        assert.ok(await link.count() > 0, "the reset link is a link");
        const box = await link.boundingBox();
        assert.ok(box && box.x + box.width <= PHONE.width, JSON.stringify(box));
        // the link's form, live: a new password for ada
        await link.click();
        await page.waitForURL(/\/users\/reset\?token=/);
        await page.getByLabel("New password").waitFor();
        await fits(page, "the reset link's form");
      });

      await t.step("the verify page leads to the outbox in development", async () => {
        await page.goto(`${app.origin}/users/verify?email=ada%40example.com`);
        await page.getByRole("link", { name: "Open the outbox" }).click();
        await page.waitForURL(`${app.origin}/users/outbox`);
      });

      await t.step("a site's home has one title, its name, not the name twice", async () => {
        for (const [path, title] of [["/", "Gatehouse demo"], ["/broker/", "Relay broker"]]) {
          await page.goto(app.origin + path);
          assert.equal(await page.locator("head > title").count(), 1, path);
          assert.equal(await page.title(), title, path);
        }
      });

      await t.step("the development identity provider says GitHub", async () => {
        await page.goto(`${app.origin}/dev-idp/`);
        assert.match(await page.locator("body").innerText(), /GitHub/);
        assert.doesNotMatch(await page.content(), /Github/);
      });

      await t.step("the consent form says GitHub, and signs in", async () => {
        await page.goto(app.origin + consent);
        assert.equal(await page.locator("h1").textContent(), "Sign in with GitHub");
        assert.doesNotMatch(await page.locator("body").innerText(), /Github/);
      });

      await t.step("after signing out, the sign-in page says so", async () => {
        await page.goto(`${app.origin}/users/login`);
        await page.getByLabel("E-mail").fill("ada@example.com");
        await page.getByLabel("Password").fill("correct horse battery staple");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL(`${app.origin}/users/`);
        await fits(page, "/users/ (signed in)");
        await page.getByRole("button", { name: "Sign out" }).first().click();
        await page.waitForURL(/\/users\/login/);
        assert.match(await page.getByRole("status").first().innerText(), /You are signed out\./);
        await fits(page, "/users/login after signing out");
        await axeCheck(page, "/users/login after signing out (phone)");
      });

      await t.step("the relay demo signed in fits", async () => {
        await page.goto(`${app.origin}/relay-demo/login`);
        await page.getByRole("link", { name: "Continue with GitHub" }).click();
        await page.waitForURL(/\/dev-idp\/github\/login\/oauth\/authorize/);
        await page.getByLabel("E-mail", { exact: true }).fill("grace@example.com");
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForURL(`${app.origin}/relay-demo`);
        assert.match(await page.locator("main").innerText(), /Signed in as grace@example\.com/);
        await fits(page, "/relay-demo/ (signed in)");
      });

      await t.step("the owner's home fits", async () => {
        await page.goto(`${app.origin}/owner/login`);
        await page.getByLabel("E-mail").fill("owner@example.com");
        await page.getByLabel("Password").fill("owner-password");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL(`${app.origin}/owner/`);
        await fits(page, "/owner/ (signed in)");
      });

      await t.step(
        "the console: one header line at 1280 px, tables as cards on a phone",
        async () => {
          const desk = await browser.newContext({ viewport: { width: 1280, height: 900 } });
          const p = await desk.newPage();
          await p.goto(`${app.origin}/admin/login`);
          await p.getByLabel("E-mail").fill(OWNER.email);
          await p.getByLabel("Password").fill(OWNER.password);
          await p.getByRole("button", { name: "Sign in" }).click();
          await p.waitForURL(`${app.origin}/admin/`);
          const tops = await p.evaluate(() =>
            [...document.querySelector(".top-inner")!.children].map((e) =>
              Math.round(e.getBoundingClientRect().bottom)
            )
          );
          const lowest = Math.max(...tops);
          const header = await p.evaluate(() =>
            document.querySelector(".top")!.getBoundingClientRect().height
          );
          assert.ok(header < 80, `the header is ${header} px high (${tops})`);
          assert.ok(lowest < 80, `${tops}`);
          await p.setViewportSize(PHONE);
          await p.goto(`${app.origin}/admin/users`);
          await fits(p, "/admin/users");
          const cells = await p.evaluate(() =>
            [...document.querySelectorAll(".table-wrap tbody td")].map((td) => {
              const r = td.getBoundingClientRect();
              const wrap = td.closest(".table-wrap")!.getBoundingClientRect();
              return {
                label: getComputedStyle(td, "::before").content,
                inside: r.left >= wrap.left - 1 && r.right <= wrap.right + 1,
                height: r.height,
                text: td.textContent,
                // two lines of the cell's text and its padding: the bound of a card's row
                twoLines: 2 * parseFloat(getComputedStyle(td).lineHeight) +
                  parseFloat(getComputedStyle(td).paddingTop) +
                  parseFloat(getComputedStyle(td).paddingBottom),
              };
            })
          );
          assert.ok(cells.length >= 4, JSON.stringify(cells));
          for (const c of cells) {
            assert.notEqual(c.label, "none", "each cell names its column");
            assert.ok(c.inside, "no cell is cut off");
            assert.ok(
              c.height <= c.twoLines + 0.5,
              `the ${c.label} row of a card is ${c.height} px high, more than two lines ` +
                `(${c.twoLines} px): ${JSON.stringify(c.text)}`,
            );
          }
          assert.deepEqual(
            cells.slice(0, 4).map((c) => c.label),
            ['"E-mail"', '"Name"', '"Status"', '"Created"'],
          );
          await axeCheck(p, "/admin/users (phone, cards)");
          const none = await p.goto(`${app.origin}/admin/nope`);
          assert.equal(none?.status(), 404);
          assert.equal(await p.locator("h1").textContent(), "Nothing here");
          await fits(p, "/admin/nope (signed in)");
          await desk.close();
        },
      );
      await phone.close();
    } finally {
      await browser.close();
      await app.close();
    }
  },
});
