/**
 * README's Cloudflare Workers line, "the npm mirror, bundled": the mirror as `build_npm.ts`
 * builds it, packed and installed with `npm install` in a fresh Worker project, a Worker doing
 * what the core quick start does (a password sign-in that sets a session cookie, read back on
 * the next request) bundled from `node_modules` for the browser platform as a Workers build
 * does (`deno bundle`, esbuild underneath, as wrangler's own bundler; wrangler itself is not
 * run), then served by workerd through Miniflare, under Cloudflare's production cap of 100,000
 * PBKDF2 iterations per call (which local workerd does not enforce).
 *
 * @module
 */
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";

const root = new URL("../../", import.meta.url).pathname;
const HAVE_NPM = await new Deno.Command("npm", { args: ["--version"], stdout: "null" }).output()
  .then((o) => o.success, () => false);

async function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  assert.ok(out.success, `${cmd} ${args.join(" ")}:\n${text.decode(out.stderr)}`);
  return text.decode(out.stdout);
}

/** The core quick start's handler as a Worker, the secret from a binding. */
const WORKER = `
import {
  createSessionCookie,
  emailAllowed,
  hashPassword,
  readSession,
  verifyPassword,
} from "@gatehouse/gatehouse";

// Cloudflare Workers refuse PBKDF2 above 100,000 iterations per call; workerd does not.
const deriveBits = SubtleCrypto.prototype.deriveBits;
SubtleCrypto.prototype.deriveBits = function (algorithm, key, length) {
  if (algorithm && algorithm.name === "PBKDF2" && algorithm.iterations > 100000) {
    return Promise.reject(new DOMException("iteration counts above 100000 are not supported", "NotSupportedError"));
  }
  return deriveBits.call(this, algorithm, key, length);
};

let stored; // hashed on the first request: a Worker does no crypto at start-up

export default {
  async fetch(req, env) {
    const session = { secret: env.SESSION_SECRET, cookieName: "__Host-session" };
    stored ??= await hashPassword("correct horse battery staple");
    const identity = await readSession(session, req);
    if (identity) return new Response(\`hello \${identity.subject}\`);
    const form = await req.formData().catch(() => null);
    const email = String(form?.get("email") ?? "");
    if (form && await verifyPassword(String(form.get("password")), stored)) {
      if (!emailAllowed({ mode: "owners", email, owners: "me@example.com", domains: "" })) {
        return new Response("forbidden", { status: 403 });
      }
      return new Response(null, {
        status: 303,
        headers: { location: "/", "set-cookie": await createSessionCookie(session, email) },
      });
    }
    return new Response("sign in first", { status: 401 });
  },
};
`;

Deno.test({
  name:
    "workerd: the npm mirror installed with npm and bundled runs the core quick start in a Worker",
  ignore: !HAVE_NPM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-workerd-npm-" });
    try {
      const mirror = `${dir}/mirror`;
      await sh(Deno.execPath(), [
        "run",
        "-A",
        "--config",
        `${root}tests/deno.json`,
        `${root}scripts/build_npm.ts`,
        "--out",
        mirror,
        "--no-install",
      ], root);
      const tarball = (await sh("npm", ["pack", "--silent", "--pack-destination", dir], mirror))
        .trim().split("\n").pop()!;
      const app = `${dir}/worker`;
      await Deno.mkdir(app);
      await Deno.writeTextFile(
        `${app}/package.json`,
        JSON.stringify({ name: "worker", private: true, type: "module" }),
      );
      await sh("npm", ["install", "--no-audit", "--no-fund", `${dir}/${tarball}`], app);
      await Deno.writeTextFile(`${app}/worker.js`, WORKER);
      // from node_modules, as a Workers build resolves it (package.json, no import map)
      await sh(Deno.execPath(), [
        "bundle",
        "--quiet",
        "--no-config",
        "--node-modules-dir=manual",
        "--platform",
        "browser",
        "-o",
        `${app}/out.js`,
        `${app}/worker.js`,
      ], app);
      const bundled = await Deno.readTextFile(`${app}/out.js`);
      assert.doesNotMatch(bundled, /from\s*"@gatehouse\/gatehouse"/, "the package is bundled in");

      const mf = new Miniflare({
        modules: true,
        script: bundled,
        compatibilityDate: "2025-09-01",
        bindings: { SESSION_SECRET: "a long random secret for the worker test, 32+ chars" },
      });
      try {
        const post = (password: string) =>
          mf.dispatchFetch("https://worker.test/", {
            method: "POST",
            body: new URLSearchParams({ email: "me@example.com", password }),
            redirect: "manual",
          });
        const wrong = await post("wrong password");
        assert.equal(wrong.status, 401);
        assert.equal(await wrong.text(), "sign in first");
        const signedIn = await post("correct horse battery staple");
        assert.equal(signedIn.status, 303);
        await signedIn.text();
        const cookie = signedIn.headers.get("set-cookie") ?? "";
        assert.match(cookie, /^__Host-session=/);
        const home = await mf.dispatchFetch("https://worker.test/", {
          headers: { cookie: cookie.split(";")[0] },
        });
        assert.equal(await home.text(), "hello me@example.com");
      } finally {
        await mf.dispose();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
