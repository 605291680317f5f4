/**
 * What the console's browser tests share: the app with 10,000 seeded accounts and a real
 * Gatehouse server process, a relay site and a webhook receiver on loopback, axe-core run in
 * the page, and screenshots at desktop and phone widths (saved under
 * `tests/e2e/screenshots/console/` and checked non-blank). `.ci/run` clears
 * `tests/e2e/screenshots/` before the tests and packs its PNGs into
 * `artefacts/screenshots.tar.gz` after them: that archive is the CI artefact.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { verifyRelay } from "../../mod.ts";
import { decodePng, inkRatio } from "./_png.ts";
import {
  type ConsoleApp,
  type Gatehouse,
  makeUser,
  seedUsers,
  startConsoleApp,
  startGatehouse,
} from "../app/console/_harness.ts";

export { makeUser };

/** Everything a console browser test runs against. */
export interface ConsoleWorld {
  app: ConsoleApp;
  gh: Gatehouse;
  close(): Promise<void>;
}

/** The app (10,000 seeded accounts) managing a Gatehouse server process. */
export async function startWorld(vars: Record<string, string> = {}): Promise<ConsoleWorld> {
  const gh = await startGatehouse();
  try {
    const app = await startConsoleApp({ GATEHOUSE_ADMIN: gh.admin, ...vars });
    await seedUsers(app.db, 10_000);
    return {
      app,
      gh,
      async close() {
        await app.close();
        await gh.close();
      },
    };
  } catch (e) {
    await gh.close();
    throw e;
  }
}

/** A site that signs people in through the app's broker, with the secret set once known. */
export interface RelaySite {
  origin: string;
  callback: string;
  secret: string;
  close(): Promise<void>;
}

/** A loopback relay site: `/start` goes to the broker, `/callback` verifies the token. */
export function startRelaySite(brokerOrigin: string, siteId: string): RelaySite {
  const nonces = new Set<string>();
  const site: RelaySite = {
    origin: "",
    callback: "",
    secret: "",
    close: async () => await server.shutdown(),
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/start") {
      const nonce = crypto.randomUUID().replaceAll("-", "");
      nonces.add(nonce);
      const to = new URL(`${brokerOrigin}/broker/start`);
      to.searchParams.set("site", siteId);
      to.searchParams.set("return_to", site.callback);
      to.searchParams.set("nonce", nonce);
      to.searchParams.set("provider", "github");
      return Response.redirect(to.href, 302);
    }
    if (url.pathname === "/callback") {
      const claims = await verifyRelay(site.secret, url.searchParams.get("relay") ?? "");
      const ok = claims !== null && nonces.delete(claims.nonce);
      const body = ok ? `Signed in at the relay site as ${claims!.email}` : "Relay sign-in refused";
      return new Response(
        `<!doctype html><html lang="en"><head><title>Relay site</title></head><body><main><h1>${body}</h1></main></body></html>`,
        { status: ok ? 200 : 403, headers: { "content-type": "text/html; charset=utf-8" } },
      );
    }
    return new Response("not found", { status: 404 });
  });
  site.origin = `http://127.0.0.1:${server.addr.port}`;
  site.callback = `${site.origin}/callback`;
  return site;
}

/** A webhook receiver on loopback that counts deliveries. */
export function startReceiver(): { url: string; deliveries: string[]; close(): Promise<void> } {
  const deliveries: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.text();
    deliveries.push(req.headers.get("x-gatehouse-delivery") ?? "");
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    deliveries,
    close: () => server.shutdown(),
  };
}

const AXE = await Deno.readTextFile(
  new URL("../node_modules/axe-core/axe.min.js", import.meta.url),
);

/**
 * Runs axe-core on the page; fails on any serious or critical violation, naming them, or with
 * `everyImpact` on any violation at all (minor and moderate too).
 *
 * With `javaScript: false` (a page of a context with JavaScript off) axe cannot run in that
 * page: its timers never fire there. The page's own DOM, as that browser built it without
 * scripts, is then checked in a twin page at the same URL and width whose HTML is exactly that
 * DOM and in which no page script may run (`script-src 'none'`, scripts not fetched); its
 * styles load from the app as in the original.
 */
export async function axeCheck(
  page: Page,
  name: string,
  o: { javaScript?: boolean; everyImpact?: boolean } = {},
): Promise<number> {
  if (o.javaScript === false) return await axeCheckScriptless(page, name, o);
  // Evaluated through the devtools protocol, so the page's CSP does not apply to it.
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const r = await axe.run(document, {
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
      },
    });
    return r.violations.map((v: { id: string; impact: string; nodes: { target: string[] }[] }) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    }));
  }) as { id: string; impact: string; targets: string[] }[];
  if (o.everyImpact) {
    assert.deepEqual(result, [], `axe: violations on ${name}`);
    return 0;
  }
  const bad = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad, [], `axe: serious or critical violations on ${name}`);
  return result.length;
}

async function axeCheckScriptless(
  page: Page,
  name: string,
  o: { everyImpact?: boolean },
): Promise<number> {
  const html = await page.content();
  const url = page.url().split("#")[0];
  const browser = page.context().browser();
  assert.ok(browser, "a page of a launched browser");
  const twin = await browser.newContext({
    viewport: page.viewportSize() ?? { width: 1280, height: 900 },
  });
  try {
    await twin.route("**/*", (route) => {
      const req = route.request();
      if (req.url() === url && req.resourceType() === "document") {
        return route.fulfill({
          status: 200,
          headers: {
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": "script-src 'none'",
          },
          body: html,
        });
      }
      if (req.resourceType() === "script") return route.abort();
      return route.continue();
    });
    const p = await twin.newPage();
    await p.goto(url);
    return await axeCheck(p, `${name} (JavaScript off)`, { everyImpact: o.everyImpact });
  } finally {
    await twin.close();
  }
}

/** The phone width of the checks. */
export const PHONE = { width: 390, height: 844 };

/**
 * The checks of one page as it is now, at desktop width and then at phone width (390 px, the
 * same page resized, so a page that answered a form is checked too): axe-core (with JavaScript
 * on or off, as the page's context; `everyImpact` fails on minor findings too), a screenshot `<name>-desktop` / `<name>-phone` decoded and
 * checked non-blank, and nothing wider than the phone. The page ends at its old size.
 */
export async function checkPage(
  page: Page,
  name: string,
  o: { javaScript: boolean; everyImpact?: boolean },
): Promise<void> {
  const size = page.viewportSize() ?? { width: 1280, height: 900 };
  await axeCheck(page, `${name} (desktop)`, o);
  await consoleShot(page, `${name}-desktop`);
  await page.setViewportSize(PHONE);
  try {
    await axeCheck(page, `${name} (phone)`, o);
    await consoleShot(page, `${name}-phone`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= PHONE.width, `${name} is ${wide} px wide on a ${PHONE.width} px phone`);
  } finally {
    await page.setViewportSize(size);
  }
}

const SHOTS = new URL("./screenshots/console/", import.meta.url);

/** Saves a full-page screenshot `<name>.png`, checks it is not blank. */
export async function consoleShot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  const png = await page.screenshot({ fullPage: true });
  await Deno.writeFile(new URL(`${name}.png`, SHOTS), png);
  const pixels = decodePng(png);
  const ink = inkRatio(pixels);
  assert.ok(ink > 0.001, `screenshot ${name} looks blank (ink ${ink})`);
}
