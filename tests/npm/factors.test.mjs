// The npm mirror's second factor and passkey flows in Node 20: TOTP enrolment with its QR code
// (`lean-qr`), sign-in with a code computed here with `node:crypto`, a backup code, and the
// passkey options of `@simplewebauthn/server`, on a libSQL temp file. Needs
// `deno task build:npm` first. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as d1 from "../../npm/d1.js";
import { hashPassword } from "../../npm/mod.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function appCode(base32, ms) {
  const bits = [...base32].map((c) => ALPHABET.indexOf(c).toString(2).padStart(5, "0")).join("");
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 30_000)));
  const mac = createHmac("sha1", key).update(counter).digest();
  const o = mac[mac.length - 1] & 15;
  return String((mac.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

test("Node: TOTP enrolment, QR code, sign-in with a code and a backup code; passkey options", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-npm-factors-"));
  const db = d1.openLibsql({ url: `file:${join(dir, "site.db")}` });
  try {
    await d1.applySchema(db);
    const secret = "node test token secret";
    const id = "node-user";
    const email = "node-factors@example.com";
    const now = Date.now();
    const hash = await hashPassword("correct horse battery staple", { iterations: 1000 });
    await db.prepare(
      `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
       VALUES (?, ?, ?, 1, 's', ?, ?)`,
    ).bind(id, email, hash, now, now).run();
    const session = { id: "node-session", issuedAt: Math.floor(now / 1000) };
    const s = await d1.startTotpEnrolment(db, { userId: id, session, secret, issuer: "Node" });
    assert.equal(s.ok, true);
    assert.match(d1.totpQrSvg(s.uri), /^<svg /);
    const c = await d1.confirmTotpEnrolment(db, {
      userId: id,
      code: appCode(s.secret, now),
      secret,
      now,
    });
    assert.equal(c.ok, true);
    assert.equal(c.backupCodes.length, 10);
    const later = now + 30_000;
    const l = await d1.login(db, {
      email,
      password: "correct horse battery staple",
      secret,
      iterations: 1000,
      now: later,
    });
    assert.equal(l.error, "second_factor_required");
    const v = await d1.verifySecondFactor(db, {
      ticket: l.ticket,
      code: appCode(s.secret, later),
      secret,
      now: later,
    });
    assert.deepEqual(v, { ok: true, userId: id, method: "totp", backupCodesLeft: 10 });
    const b = await d1.verifySecondFactor(db, {
      ticket: l.ticket,
      code: c.backupCodes[0],
      secret,
      now: later,
    });
    assert.equal(b.method, "backup");
    const rp = { id: "example.com", name: "Example", origin: "https://example.com" };
    const o = await d1.passkeyRegistrationOptions(db, { userId: id, session, rp, now });
    assert.equal(o.ok, true);
    assert.equal(o.options.rp.id, "example.com");
    assert.deepEqual(o.options.pubKeyCredParams.map((p) => p.alg), [-8, -7, -257]);
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
