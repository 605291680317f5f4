/**
 * The `/d1` second factor and passkey flows inside workerd, Cloudflare's runtime, through
 * Miniflare, on a real D1 binding: TOTP enrolment with its QR code, sign-in with the code,
 * and a passkey added and used with `@simplewebauthn/server` (the test authenticator runs in
 * the worker too). The flows are bundled with `deno bundle` for the browser platform, as a
 * Workers build would.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";

const root = new URL("../../", import.meta.url);

const ENTRY = `
export * from "${new URL("lib/d1/totp.ts", root).pathname}";
export * from "${new URL("lib/d1/second_factor.ts", root).pathname}";
export * from "${new URL("lib/d1/passkeys.ts", root).pathname}";
export * from "${new URL("lib/d1/qr.ts", root).pathname}";
export * from "${new URL("lib/d1/login.ts", root).pathname}";
export * from "${new URL("lib/d1/schema.ts", root).pathname}";
export * from "${new URL("lib/auth/totp.ts", root).pathname}";
export { hashPassword } from "${new URL("lib/auth/password.ts", root).pathname}";
export * as authenticator from "${new URL("tests/d1/_authenticator.ts", root).pathname}";
`;

async function bundle(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-workerd-d1-" });
  try {
    await Deno.writeTextFile(`${dir}/entry.ts`, ENTRY);
    const out = `${dir}/flows.js`;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--config",
        new URL("deno.json", root).pathname,
        "--platform",
        "browser",
        "-o",
        out,
        `${dir}/entry.ts`,
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

const WORKER = `
import * as g from "./flows.js";

const SECRET = "workerd token secret";
const rp = { id: "example.com", name: "Example", origin: "https://example.com" };

export default {
  async fetch(request, env) {
    const db = env.DB;
    const out = {};
    try {
      await g.applySchema(db);
      const now = Date.now();
      const id = crypto.randomUUID();
      const email = "w-" + id + "@example.com";
      const hash = await g.hashPassword("correct horse battery staple", { iterations: 1000 });
      await db.prepare("INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at) VALUES (?, ?, ?, 1, 's', ?, ?)")
        .bind(id, email, hash, now, now).run();
      const session = { id: "session-" + id, issuedAt: Math.floor(now / 1000) };
      const s = await g.startTotpEnrolment(db, { userId: id, session, secret: SECRET, issuer: "Workers" });
      out.enrol = s.ok;
      out.qr = s.ok && g.totpQrSvg(s.uri).startsWith("<svg");
      const key = g.base32Decode(s.secret);
      const c = await g.confirmTotpEnrolment(db, { userId: id, code: await g.totp(key, { now }), secret: SECRET });
      out.backupCodes = c.ok ? c.backupCodes.length : c.error;
      const l = await g.login(db, { email, password: "correct horse battery staple", secret: SECRET, iterations: 1000, now: now + 30000 });
      out.login = l.error;
      const v = await g.verifySecondFactor(db, { ticket: l.ticket, code: await g.totp(key, { now: now + 30000 }), secret: SECRET, now: now + 30000 });
      out.second = v.ok ? v.method : v.error;
      const reg = await g.passkeyRegistrationOptions(db, { userId: id, session, rp });
      const made = await g.authenticator.create(reg.options, { origin: rp.origin, alg: "ES256" });
      const added = await g.verifyPasskeyRegistration(db, { userId: id, session, ceremony: reg.ceremony, response: made.json, rp });
      out.passkey = added.ok ? added.passkey.attestation : added.error;
      const opts = await g.passkeySignInOptions(db, { rp });
      const answer = await g.authenticator.get(opts.options, made.credential, { origin: rp.origin });
      const signed = await g.verifyPasskeySignIn(db, { ceremony: opts.ceremony, response: answer, rp });
      out.passkeySignIn = signed.ok && signed.userId === id;
    } catch (e) {
      out.error = String(e && e.stack || e);
    }
    return Response.json(out);
  },
};
`;

Deno.test({
  name: "d1 second factor and passkey flows in workerd on D1 (Miniflare)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const mf = new Miniflare({
      modules: [
        { type: "ESModule", path: "worker.mjs", contents: WORKER },
        { type: "ESModule", path: "flows.js", contents: await bundle() },
      ],
      compatibilityDate: "2025-09-01",
      d1Databases: ["DB"],
    });
    try {
      const res = await mf.dispatchFetch("http://worker.test/");
      const result = await res.json();
      assert.deepEqual(result, {
        enrol: true,
        qr: true,
        backupCodes: 10,
        login: "second_factor_required",
        second: "totp",
        passkey: "none",
        passkeySignIn: true,
      });
    } finally {
      await mf.dispose();
    }
  },
});
