/**
 * Start-up as a newcomer meets it, with the real process (what `deno task start`
 * runs): the banner names each site's address, the console with the
 * development owner's login, the mail sandbox key and the operator token; `MODE=production`
 * names every missing or too short variable in one pass and exits 1 without a stack trace;
 * `.env.example` lists every variable production needs.
 */
import assert from "node:assert/strict";
import { START, startAppProcess } from "../../e2e/_process.ts";
import { REQUIRED_VARIABLES } from "../../../app/required_env.ts";
import { sites } from "../../../app/sites.ts";
import { productionVars } from "../_prod.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

async function runProduction(vars: Record<string, string>): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: START,
    cwd: ROOT,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      NO_COLOR: "1",
      PORT: "0",
      ...vars,
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

Deno.test("start-up: the development banner has every site, the owner's login, the sandbox key and the operator token", async () => {
  const app = await startAppProcess();
  try {
    const out = app.output();
    const origin = `http://127.0.0.1:${app.port}`;
    for (const site of sites) assert.ok(out.includes(`${origin}${site.path}/`), site.path);
    assert.match(out, new RegExp(`Operator's console: ${origin}/admin/`));
    assert.match(out, /development owner login: owner@example\.com \/ owner-password/);
    assert.match(out, /sandbox API key: +gh_test_\S+/);
    assert.match(
      out,
      /operator token: +development-only-mail_operator_token-do-not-use-in-production/,
    );
    assert.match(
      out.trim().split("\n").at(-1)!,
      /^Gatehouse demo listening on http:\/\/127\.0\.0\.1:\d+\/$/,
    );
    for (const icon of ["/favicon.ico", "/favicon.svg"]) {
      const res = await fetch(`${origin}${icon}`);
      assert.equal(res.headers.get("content-type"), "image/svg+xml");
      assert.match(await res.text(), /^<svg /);
    }
    // The login it prints works.
    const res = await fetch(`${origin}/admin/api/auth/login`, {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({ email: "owner@example.com", password: "owner-password" }),
      redirect: "manual",
    });
    await res.body?.cancel();
    assert.equal(res.status, 303);
    assert.match(res.headers.get("set-cookie") ?? "", /^__Host-console-session=/);
  } finally {
    await app.close();
  }
});

Deno.test("start-up: MODE=production lists every missing or short variable by name, exits 1, no stack trace", async () => {
  const bare = await runProduction({ MODE: "production" });
  assert.equal(bare.code, 1);
  assert.match(
    bare.out,
    /cannot start in production: \d+ variables need attention \(see \.env\.example\)/,
  );
  for (const v of REQUIRED_VARIABLES) {
    if (v.when) continue;
    assert.match(bare.out, new RegExp(`- ${v.name} is missing`), v.name);
  }
  assert.match(bare.out, /APP_URL or APP_HOSTS is missing/);
  assert.doesNotMatch(bare.out, /\n\s+at /, "no stack trace");
  assert.doesNotMatch(bare.out, /listening on/);

  const dir = await Deno.makeTempDir({ prefix: "gatehouse-prod-start-" });
  try {
    const full = await productionVars(dir, "http://127.0.0.1:9/emails", {
      APP_URL: "https://app.example",
    });
    const short = await runProduction({
      ...full,
      TOKEN_SECRET: "short",
      CONSOLE_RELAY_SECRET: "x",
    });
    assert.equal(short.code, 1);
    const lines = short.out.split("\n").filter((l) => l.startsWith("  - "));
    assert.deepEqual(lines, [
      "  - TOKEN_SECRET is too short: at least 16 characters (signs codes and links of the multi-user site).",
      "  - CONSOLE_RELAY_SECRET is too short: at least 16 characters (the console's secret at the broker).",
    ]);
    const provider = await runProduction({ ...full, STATE_SECRET: "", GOOGLE_CLIENT_ID: "g" });
    assert.match(provider.out, /- STATE_SECRET is missing/);
    assert.match(provider.out, /- GOOGLE_CLIENT_SECRET is missing/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("start-up: .env.example lists every variable production needs", async () => {
  const text = await Deno.readTextFile(`${ROOT}.env.example`);
  for (const v of REQUIRED_VARIABLES) {
    assert.match(text, new RegExp(`^(# )?${v.name}=`, "m"), v.name);
  }
  for (const name of ["APP_URL", "APP_HOSTS", "GATEHOUSE_ADMIN", "CONSOLE_SSO", "DATABASE_URL"]) {
    assert.match(text, new RegExp(`^(# )?${name}=`, "m"), name);
  }
});
