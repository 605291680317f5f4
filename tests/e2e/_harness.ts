/**
 * End-to-end harness: the whole reference app (`createApp`) on a loopback port with a temp
 * libSQL database, headless Debian Chromium through playwright-core, and screenshots that
 * are saved under `tests/e2e/screenshots/` and checked to be non-blank.
 */
import assert from "node:assert/strict";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { decodePng, inkRatio } from "./_png.ts";

export interface RunningApp {
  origin: string;
  /** The app's database (a libSQL file of a temp folder). */
  databaseUrl: string;
  close(): Promise<void>;
}

/** The app with a fresh database; `vars` add to a development environment. */
export async function startApp(vars: Record<string, string> = {}): Promise<RunningApp> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-e2e-" });
  const databaseUrl = `file:${dir}/app.db`;
  const app = await createApp(loadAppEnv({
    MODE: "development",
    DATABASE_URL: databaseUrl,
    ...vars,
  }));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    databaseUrl,
    async close() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Debian's Chromium, the browser of these tests (`apt-get install chromium`). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * False on a machine without Chromium: browser tests are then reported as ignored (by name,
 * with this note once), not failed. `.ci/run` installs Chromium, so CI runs them all.
 */
export const HAVE_CHROMIUM: boolean = (() => {
  try {
    return Deno.statSync(CHROMIUM_PATH).isFile;
  } catch {
    console.warn(`browser tests ignored: ${CHROMIUM_PATH} is missing (apt-get install chromium)`);
    return false;
  }
})();

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** A fresh browser profile with JavaScript on or off. */
export function context(browser: Browser, javaScriptEnabled: boolean): Promise<BrowserContext> {
  return browser.newContext({ javaScriptEnabled, viewport: { width: 800, height: 900 } });
}

const SHOTS = new URL("./screenshots/", import.meta.url);

/** Saves a full-page screenshot as `<name>.png` and checks that it is not blank. */
export async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  const png = await page.screenshot({ fullPage: true });
  await Deno.writeFile(new URL(`${name}.png`, SHOTS), png);
  const ink = inkRatio(decodePng(png));
  assert.ok(ink > 0.0001, `screenshot ${name} looks blank (ink ${ink})`);
}

/** The path (and query) of the page's current URL. */
export function where(page: Page): string {
  const u = new URL(page.url());
  return u.pathname + u.search;
}
