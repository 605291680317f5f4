/**
 * The core's test cases, written once and run in three runtimes: Deno (`core.test.ts`, against
 * `mod.ts`), workerd through Miniflare (`tests/workerd/core.test.ts`, against the bundled core)
 * and Node 20 (`tests/npm/core.test.mjs`, against the npm mirror). Plain JavaScript with no
 * imports but `node:assert/strict`, so every runtime loads it unchanged.
 *
 * Each case receives `{ api, providerUrl }`: `api` is the core's public module, `providerUrl`
 * the origin of a running fake OAuth provider (`_fake_provider.mjs`) for cases marked
 * `{ provider: true }`.
 *
 * @module
 */
import assert from "node:assert/strict";

/** @type {{ name: string, provider: boolean, fn: (ctx: any) => Promise<void> }[]} */
export const cases = [];

function test(name, fn, options = {}) {
  cases.push({ name, provider: options.provider === true, fn });
}

const T0 = Date.UTC(2026, 0, 1); // a fixed clock, milliseconds since the epoch
const FAST = { iterations: 1000 };

function bodyOf(token) {
  const b64 = token.split(".")[0].replaceAll("-", "+").replaceAll("_", "/");
  const s = atob(b64);
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0))));
}

function flip(text, index) {
  const c = text[index];
  return text.slice(0, index) + (c === "A" ? "B" : "A") + text.slice(index + 1);
}

/** Installs a deriveBits wrapper that refuses > 100,000 iterations, like Cloudflare Workers. */
function emulateWorkersCap() {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "deriveBits");
  const original = subtle.deriveBits;
  const calls = [];
  subtle.deriveBits = function (algorithm, key, length) {
    if (algorithm && algorithm.name === "PBKDF2") {
      calls.push(algorithm.iterations);
      if (algorithm.iterations > 100_000) {
        return Promise.reject(
          new DOMException(
            "Pbkdf2 failed: iteration counts above 100000 are not supported",
            "NotSupportedError",
          ),
        );
      }
    }
    return original.call(this, algorithm, key, length);
  };
  return {
    calls,
    restore() {
      if (hadOwn) subtle.deriveBits = original;
      else delete subtle.deriveBits;
    },
  };
}

// ---------------------------------------------------------------- passwords

test("password: default hash is self-describing, salted, and verifies", async ({ api }) => {
  const a = await api.hashPassword("correct horse battery staple");
  const b = await api.hashPassword("correct horse battery staple");
  assert.match(a, /^\$pbkdf2-sha256\$i=600000,c=100000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.notEqual(a, b, "random salt");
  assert.equal(await api.verifyPassword("correct horse battery staple", a), true);
  assert.equal(await api.verifyPassword("correct horse battery stapler", a), false);
  assert.equal(await api.verifyPassword("", a), false);
  assert.equal(api.DEFAULT_PASSWORD_ITERATIONS, 600_000);
});

test("password: default stays within Workers' 100,000-iterations-per-call cap", async ({ api }) => {
  const cap = emulateWorkersCap();
  try {
    const stored = await api.hashPassword("pw-under-cap");
    assert.equal(await api.verifyPassword("pw-under-cap", stored), true);
    assert.deepEqual(
      cap.calls,
      [100_000, 100_000, 100_000, 100_000, 100_000, 100_000].concat(
        [100_000, 100_000, 100_000, 100_000, 100_000, 100_000],
      ),
    );
    // A plain single-call PBKDF2 above the cap would be refused by the emulated runtime...
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode("x"),
      "PBKDF2",
      false,
      [
        "deriveBits",
      ],
    );
    await assert.rejects(
      crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: "SHA-256", salt: new Uint8Array(16), iterations: 600_000 },
        key,
        256,
      ),
    );
    // ...and a stored hash asking for that is false, without calling PBKDF2 at all.
    const over = stored.replace("c=100000", "c=600000");
    const before = cap.calls.length;
    assert.equal(await api.verifyPassword("pw-under-cap", over), false);
    assert.equal(cap.calls.length, before);
  } finally {
    cap.restore();
  }
});

test("password: the chain is the documented construction", async ({ api }) => {
  // i=5, c=2: T1 = PBKDF2(P, S, 2), T2 = PBKDF2(P, T1, 2), T3 = PBKDF2(P, T2, 1).
  const salt = Uint8Array.from({ length: 16 }, (_, i) => i);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode("pässword"),
    "PBKDF2",
    false,
    [
      "deriveBits",
    ],
  );
  let block = salt;
  for (const n of [2, 2, 1]) {
    block = new Uint8Array(
      await crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: "SHA-256", salt: block, iterations: n },
        key,
        256,
      ),
    );
  }
  const b64 = (u) => btoa(String.fromCharCode(...u)).replace(/=+$/, "");
  const stored = `$pbkdf2-sha256$i=5,c=2$${b64(salt)}$${b64(block)}`;
  assert.equal(await api.verifyPassword("pässword", stored), true);
  // NFD input normalizes to the same NFC password.
  assert.equal(await api.verifyPassword("pa\u0308ssword", stored), true);
  assert.equal(await api.verifyPassword("password", stored), false);
  // With i <= c it is plain PBKDF2; reference value from Python's hashlib.pbkdf2_hmac(
  // "sha256", b"passwd", b"saltSALTsaltSALT", 3, 32).
  const plain = `$pbkdf2-sha256$i=3,c=100000$${
    b64(new TextEncoder().encode("saltSALTsaltSALT"))
  }$CEy7aGNca8Ef88uqhthWDUuHk/FeuOCfbkDmgP6HP4w`;
  assert.equal(await api.verifyPassword("passwd", plain), true);
});

test("password: garbage, truncated and excessive hashes give false, never throw", async ({ api }) => {
  const good = await api.hashPassword("pw", FAST);
  assert.equal(await api.verifyPassword("pw", good), true);
  const bad = [
    "",
    "garbage",
    "$pbkdf2-sha256$",
    good.slice(0, -1),
    good.slice(0, -10),
    good.slice(0, good.lastIndexOf("$")),
    good.replace("i=1000", "i=0"),
    good.replace("i=1000", "i=01000"),
    good.replace("i=1000", "i=-1000"),
    good.replace("i=1000", "i=2000001"),
    good.replace("i=1000", "i=99999999999"),
    good.replace("c=100000", "c=100001"),
    good.replace("$pbkdf2-sha256$", "$pbkdf2-sha512$"),
    good.replace(",c=100000", ""),
    good + "$extra",
    good.slice(0, good.lastIndexOf("$") + 1) + "!!!!",
    good.slice(0, good.lastIndexOf("$") + 1) + "AAAA",
    " " + good,
    "x".repeat(100_000),
  ];
  for (const stored of bad) {
    assert.equal(
      await api.verifyPassword("pw", stored),
      false,
      JSON.stringify(stored.slice(0, 80)),
    );
  }
  for (const stored of [null, undefined, 42, {}, ["$pbkdf2-sha256$"]]) {
    assert.equal(await api.verifyPassword("pw", stored), false);
  }
  assert.equal(await api.verifyPassword(null, good), false);
});

test("password: needsRehash follows the wanted parameters", async ({ api }) => {
  const fast = await api.hashPassword("pw", FAST);
  assert.equal(api.needsRehash(fast, FAST), false);
  assert.equal(api.needsRehash(fast), true, "default is 600,000");
  assert.equal(api.needsRehash(fast, { iterations: 2000 }), true);
  assert.equal(api.needsRehash("garbage", FAST), true);
  assert.equal(api.needsRehash(fast.replace("c=100000", "c=50000"), FAST), true);
});

test("password: invalid arguments throw AuthError invalid_options", async ({ api }) => {
  for (const iterations of [0, -1, 1.5, 2_000_001, Number.NaN]) {
    await assert.rejects(api.hashPassword("pw", { iterations }), (e) => {
      assert.ok(e instanceof api.AuthError);
      assert.equal(e.code, "invalid_options");
      return true;
    });
  }
  await assert.rejects(api.hashPassword(""), { code: "invalid_options" });
  assert.throws(() => api.needsRehash("x", { iterations: 0 }), { code: "invalid_options" });
});

// ---------------------------------------------------------------- tokens

test("token: round trip with claims in seconds and a controlled clock in ms", async ({ api }) => {
  const token = await api.signToken("k1", {
    purpose: "reset",
    payload: { userId: 7, email: "a@example.com" },
    ttlSeconds: 3600,
    now: T0,
  });
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  const claims = await api.verifyToken("k1", token, { purpose: "reset", now: T0 + 1000 });
  assert.deepEqual(claims, {
    payload: { userId: 7, email: "a@example.com" },
    iat: T0 / 1000,
    exp: T0 / 1000 + 3600,
  });
  // Without `now` the real clock is used: a token from 2026-01-01 valid for an hour is expired.
  assert.equal(await api.verifyToken("k1", token, { purpose: "reset" }), null);
});

test("token: tampered, truncated and malformed tokens are rejected", async ({ api }) => {
  const opts = { purpose: "reset", now: T0 };
  const token = await api.signToken("k1", {
    purpose: "reset",
    payload: { admin: false },
    ttlSeconds: 60,
    now: T0,
  });
  const [body, sig] = token.split(".");
  const forged = JSON.stringify([T0 / 1000, T0 / 1000 + 60, { admin: true }]);
  const forgedBody = btoa(forged).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const bad = [
    "",
    ".",
    body,
    `${body}.`,
    `.${sig}`,
    `${flip(body, 3)}.${sig}`,
    `${body}.${flip(sig, 5)}`,
    `${forgedBody}.${sig}`,
    token.slice(0, -1),
    token.slice(0, -2),
    token.slice(1),
    `${token}.x`,
    `${body}.${sig}=`,
    `${body} .${sig}`,
    "x".repeat(20_000),
  ];
  for (const t of bad) assert.equal(await api.verifyToken("k1", t, opts), null, t);
  for (const t of [null, undefined, 1, {}]) {
    assert.equal(await api.verifyToken("k1", t, opts), null);
  }
  assert.ok(await api.verifyToken("k1", token, opts));
});

test("token: expired at exp, valid just before", async ({ api }) => {
  const token = await api.signToken("k1", { purpose: "otp", payload: 1, ttlSeconds: 600, now: T0 });
  assert.ok(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 599_999 }));
  assert.equal(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 600_000 }), null);
  assert.equal(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 86_400_000 }), null);
});

test("token: wrong secret rejected; rotated secrets sign with the first, verify with any", async ({ api }) => {
  const opts = { purpose: "p", now: T0 };
  const old = await api.signToken("old-secret", {
    purpose: "p",
    payload: "x",
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyToken("other-secret", old, opts), null);
  assert.equal(await api.verifyToken([], old, opts), null);
  assert.ok(await api.verifyToken(["new-secret", "old-secret"], old, opts));
  const fresh = await api.signToken(["new-secret", "old-secret"], {
    purpose: "p",
    payload: "x",
    ttlSeconds: 60,
    now: T0,
  });
  assert.ok(await api.verifyToken("new-secret", fresh, opts));
  assert.equal(
    await api.verifyToken("old-secret", fresh, opts),
    null,
    "signed with the first only",
  );
});

test("token: a token for one purpose never verifies for another", async ({ api }) => {
  const purposes = ["session", "oauth-state", "relay", "reset", "email-change", "session:x"];
  for (const p of purposes) {
    const token = await api.signToken("k", {
      purpose: p,
      payload: { id: 1 },
      ttlSeconds: 60,
      now: T0,
    });
    for (const q of purposes) {
      const claims = await api.verifyToken("k", token, { purpose: q, now: T0 });
      assert.equal(claims !== null, p === q, `${p} -> ${q}`);
    }
  }
});

test("token: the imported key is cached per secret", async ({ api }) => {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "importKey");
  const original = subtle.importKey;
  let imports = 0;
  subtle.importKey = function (...args) {
    imports++;
    return original.apply(this, args);
  };
  try {
    const secret = `cache-test-${Math.random()}`;
    for (let i = 0; i < 5; i++) {
      const t = await api.signToken(secret, { purpose: "p", payload: i, ttlSeconds: 60 });
      assert.equal((await api.verifyToken(secret, t, { purpose: "p" }))?.payload, i);
    }
    assert.equal(imports, 1);
    await api.signToken(`${secret}-other`, { purpose: "p", payload: 0, ttlSeconds: 60 });
    assert.equal(imports, 2);
  } finally {
    if (hadOwn) subtle.importKey = original;
    else delete subtle.importKey;
  }
});

test("token: bad signing arguments throw typed errors", async ({ api }) => {
  const base = { purpose: "p", payload: 1, ttlSeconds: 60 };
  await assert.rejects(api.signToken("", base), { code: "invalid_secret" });
  await assert.rejects(api.signToken([], base), { code: "invalid_secret" });
  await assert.rejects(api.signToken("k", { ...base, purpose: "" }), { code: "invalid_options" });
  await assert.rejects(api.signToken("k", { ...base, ttlSeconds: 0 }), { code: "invalid_options" });
  await assert.rejects(api.signToken("k", { ...base, ttlSeconds: 1.5 }), {
    code: "invalid_options",
  });
});

// ---------------------------------------------------------------- sessions

const SESSION = { secret: "session-secret-for-tests", cookieName: "__Host-session" };

function requestWithCookie(cookie) {
  return new Request("https://site.example/", cookie === undefined ? {} : { headers: { cookie } });
}

function cookiePair(setCookie) {
  return setCookie.split(";")[0];
}

test("session: cookie attributes, default and configured Max-Age, __Host- name", async ({ api }) => {
  const c = await api.createSessionCookie(SESSION, "owner@example.com", { now: T0 });
  const [pair, ...attrs] = c.split("; ");
  assert.match(pair, /^__Host-session=[A-Za-z0-9_.-]+$/);
  assert.deepEqual(attrs, ["HttpOnly", "Secure", "SameSite=Lax", "Path=/", "Max-Age=604800"]);
  assert.equal(api.DEFAULT_SESSION_MAX_AGE, 604_800);
  assert.match(
    await api.createSessionCookie({ ...SESSION, maxAge: 3600 }, "u1"),
    /; Max-Age=3600$/,
  );
  assert.match(await api.createSessionCookie(SESSION, "u1", { maxAge: 60 }), /; Max-Age=60$/);
  await assert.rejects(api.createSessionCookie({ ...SESSION, cookieName: "bad name" }, "u"), {
    code: "invalid_options",
  });
  await assert.rejects(api.createSessionCookie(SESSION, ""), { code: "invalid_options" });
  await assert.rejects(api.createSessionCookie({ ...SESSION, secret: "" }, "u"), {
    code: "invalid_secret",
  });
});

test("session: readSession returns the identity among other cookies", async ({ api }) => {
  const c = await api.createSessionCookie(SESSION, "owner@example.com", { now: T0 });
  const req = requestWithCookie(`theme=dark; ${cookiePair(c)}; other=1`);
  assert.deepEqual(await api.readSession(SESSION, req, { now: T0 + 5000 }), {
    subject: "owner@example.com",
    issuedAt: T0 / 1000,
    expiresAt: T0 / 1000 + 604_800,
  });
  // A second, stale cookie of the same name does not hide the valid one.
  const req2 = requestWithCookie(`__Host-session=stale; ${cookiePair(c)}`);
  assert.equal((await api.readSession(SESSION, req2, { now: T0 }))?.subject, "owner@example.com");
  // Works with the real clock for a fresh cookie, and with plain Headers holders.
  const live = await api.createSessionCookie(SESSION, "u42");
  assert.equal(
    (await api.readSession(SESSION, { headers: new Headers({ cookie: cookiePair(live) }) }))
      ?.subject,
    "u42",
  );
});

test("session: missing, tampered, truncated, expired, wrong-secret, cross-purpose -> null", async ({ api }) => {
  const now = T0 + 1000;
  const c = cookiePair(
    await api.createSessionCookie(SESSION, "owner@example.com", { now: T0, maxAge: 3600 }),
  );
  const value = c.slice(c.indexOf("=") + 1);
  const read = (cookie, opts = { now }) =>
    api.readSession(SESSION, requestWithCookie(cookie), opts);
  assert.equal(await read(undefined), null);
  assert.equal(await read(""), null);
  assert.equal(await read("other=1"), null);
  assert.equal(await read(`__Host-session=${flip(value, 4)}`), null);
  assert.equal(await read(`__Host-session=${flip(value, value.length - 3)}`), null);
  assert.equal(await read(`__Host-session=${value.slice(0, -4)}`), null);
  assert.equal(await read(`__Host-session=${value.slice(0, value.indexOf("."))}`), null);
  assert.equal(await read(c, { now: T0 + 3600_000 }), null, "expired");
  assert.ok(await read(c, { now: T0 + 3599_000 }));
  assert.equal(
    await api.readSession({ ...SESSION, secret: "another" }, requestWithCookie(c), { now }),
    null,
  );
  // Same secret, other cookie name: bound to the name.
  assert.equal(
    await api.readSession({ ...SESSION, cookieName: "sid" }, requestWithCookie(`sid=${value}`), {
      now,
    }),
    null,
  );
  // A generic token with the same secret for another purpose is not a session.
  const reset = await api.signToken(SESSION.secret, {
    purpose: "reset",
    payload: "owner@example.com",
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await read(`__Host-session=${reset}`), null);
  const relay = await api.signRelay(SESSION.secret, {
    email: "a@b.c",
    provider: "github",
    nonce: "n",
  }, { now: T0 });
  assert.equal(await read(`__Host-session=${relay}`), null);
});

test("session: rotated secrets keep old sessions valid; clearSessionCookie expires it", async ({ api }) => {
  const c = cookiePair(await api.createSessionCookie(SESSION, "u1", { now: T0 }));
  const rotated = { ...SESSION, secret: ["brand-new-secret", SESSION.secret] };
  assert.equal((await api.readSession(rotated, requestWithCookie(c), { now: T0 }))?.subject, "u1");
  assert.equal(
    api.clearSessionCookie(SESSION),
    "__Host-session=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0",
  );
});

// ---------------------------------------------------------------- access

test("access: isOwner trims, ignores case, and an empty list has nobody", ({ api }) => {
  const owners = " Ann@Example.com , bob@example.com,, ";
  assert.equal(api.isOwner(owners, "ann@example.com"), true);
  assert.equal(api.isOwner(owners, "  BOB@EXAMPLE.COM "), true);
  assert.equal(api.isOwner(owners, "carol@example.com"), false);
  assert.equal(api.isOwner(owners, "ann@example.com.evil.net"), false);
  assert.equal(api.isOwner(owners, ""), false);
  assert.equal(api.isOwner("", "ann@example.com"), false);
  assert.equal(api.isOwner(" , ", ""), false);
  return Promise.resolve();
});

test("access: emailAllowed per mode, exact domains only", ({ api }) => {
  const owners = "boss@gmail.com";
  const domains = "example.com, @corp.example";
  const allowed = (mode, email, o = owners, d = domains) =>
    api.emailAllowed({ mode, email, owners: o, domains: d });
  assert.equal(allowed("public", "anyone@anywhere.net"), true);
  assert.equal(allowed("public", "not-an-email"), false);
  assert.equal(allowed("domain", "x@example.com"), true);
  assert.equal(allowed("domain", " X@EXAMPLE.COM "), true);
  assert.equal(allowed("domain", "x@corp.example"), true);
  assert.equal(allowed("domain", "x@evil-example.com"), false);
  assert.equal(allowed("domain", "x@example.com.evil.net"), false);
  assert.equal(allowed("domain", "x@sub.example.com"), false);
  assert.equal(allowed("domain", "x@example.com@evil.net"), false);
  assert.equal(allowed("domain", "boss@gmail.com"), true, "owners pass in domain mode");
  assert.equal(allowed("domain", "x@example.com", "", ""), false, "empty lists allow nobody");
  assert.equal(allowed("owners", "boss@gmail.com"), true);
  assert.equal(allowed("owners", "x@example.com"), false, "owners mode is strict");
  assert.equal(allowed("owners", "boss@gmail.com", ""), false);
  assert.equal(allowed("nonsense", "boss@gmail.com"), false);
  return Promise.resolve();
});

test("access: parseAccessMode maps unknown to owners", ({ api }) => {
  assert.equal(api.parseAccessMode("public"), "public");
  assert.equal(api.parseAccessMode(" Domain "), "domain");
  assert.equal(api.parseAccessMode("owners"), "owners");
  for (const raw of ["", "everyone", undefined, null, "PUBLIC!"]) {
    assert.equal(api.parseAccessMode(raw), "owners");
  }
  return Promise.resolve();
});

// ---------------------------------------------------------------- relay

const RELAY_SECRET = "per-site-relay-secret";

test("relay: round trip, optional providerUserId leaves the shape unchanged", async ({ api }) => {
  const claims = { email: "ann@example.com", provider: "github", nonce: "n-123" };
  const t1 = await api.signRelay(RELAY_SECRET, claims, { now: T0 });
  assert.deepEqual(await api.verifyRelay(RELAY_SECRET, t1, { now: T0 }), claims);
  assert.deepEqual(Object.keys(bodyOf(t1)[2]), ["email", "provider", "nonce"]);
  assert.deepEqual(
    Object.keys(
      bodyOf(
        await api.signRelay(RELAY_SECRET, { ...claims, providerUserId: undefined }, { now: T0 }),
      )[2],
    ),
    [
      "email",
      "provider",
      "nonce",
    ],
  );
  const t2 = await api.signRelay(RELAY_SECRET, { ...claims, providerUserId: "583231" }, {
    now: T0,
  });
  assert.deepEqual(await api.verifyRelay(RELAY_SECRET, t2, { now: T0 }), {
    ...claims,
    providerUserId: "583231",
  });
  await assert.rejects(api.signRelay(RELAY_SECRET, { email: "a@b.c", provider: "github" }), {
    code: "invalid_claims",
  });
});

test("relay: tokens expire after 2 minutes (controlled clock)", async ({ api }) => {
  const token = await api.signRelay(RELAY_SECRET, {
    email: "a@b.c",
    provider: "google",
    nonce: "n",
  }, { now: T0 });
  assert.equal(api.RELAY_TTL_SECONDS, 120);
  assert.ok(await api.verifyRelay(RELAY_SECRET, token, { now: T0 + 119_999 }));
  assert.equal(await api.verifyRelay(RELAY_SECRET, token, { now: T0 + 120_000 }), null);
  const claims = await api.verifyToken(RELAY_SECRET, token, { purpose: "relay", now: T0 });
  assert.equal(claims.exp - claims.iat, 120);
});

test("relay: wrong secret, tampering, other purposes -> null", async ({ api }) => {
  const claims = { email: "a@b.c", provider: "google", nonce: "n" };
  const token = await api.signRelay(RELAY_SECRET, claims, { now: T0 });
  const opts = { now: T0 };
  assert.equal(await api.verifyRelay("other-site-secret", token, opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, flip(token, 2), opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, token.slice(0, -3), opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, "garbage", opts), null);
  const reset = await api.signToken(RELAY_SECRET, {
    purpose: "reset",
    payload: claims,
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyRelay(RELAY_SECRET, reset, opts), null);
  const wrongShape = await api.signToken(RELAY_SECRET, {
    purpose: "relay",
    payload: { email: "a@b.c" },
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyRelay(RELAY_SECRET, wrongShape, opts), null);
  assert.equal(await api.verifyToken(RELAY_SECRET, token, { purpose: "session", now: T0 }), null);
  assert.ok(await api.verifyRelay(["new", RELAY_SECRET], token, opts), "rotation");
});

// ---------------------------------------------------------------- OAuth

function oauthConfig(providerUrl, scenario, extra = {}) {
  const client = (p) => ({
    clientId: scenario,
    clientSecret: "secret",
    baseUrl: `${providerUrl}/${p}`,
  });
  return {
    clients: { google: client("google"), github: client("github"), microsoft: client("microsoft") },
    stateSecret: "state-secret-for-tests",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
    ...extra,
  };
}

/** start -> provider authorize -> callback, like a browser; returns the callback result. */
async function flow(api, config, provider, tamper = {}) {
  const start = await api.startOAuth(config, provider);
  assert.equal(start.status, 302);
  const cookie = tamper.cookie ?? cookiePair(start.headers.get("set-cookie"));
  const res = await fetch(start.headers.get("location"), { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302, "the fake provider redirects back");
  const back = new URL(res.headers.get("location"));
  assert.equal(back.origin + back.pathname, config.redirectUri(provider));
  if (tamper.state !== undefined) back.searchParams.set("state", tamper.state);
  return await api.handleOAuthCallback(
    config,
    provider,
    new Request(back, { headers: { cookie } }),
    tamper.options,
  );
}

test("oauth: configuredProviders lists providers with credentials", ({ api }) => {
  const config = {
    clients: {
      microsoft: { clientId: "m", clientSecret: "ms" },
      github: { clientId: "g", clientSecret: "gs" },
      google: { clientId: "", clientSecret: "x" },
    },
    stateSecret: "s",
    redirectUri: () => "https://site.example/cb",
  };
  assert.deepEqual(api.configuredProviders(config), ["github", "microsoft"]);
  assert.deepEqual(api.configuredProviders({ ...config, clients: {} }), []);
  return Promise.resolve();
});

test("oauth: startOAuth redirects to the real authorize URLs with state, PKCE and a state cookie", async ({ api }) => {
  const client = { clientId: "cid", clientSecret: "secret" };
  const config = {
    clients: {
      google: client,
      github: client,
      microsoft: { ...client, tenantId: "contoso.onmicrosoft.com" },
    },
    stateSecret: "state-secret",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
  };
  const expected = {
    google: ["https://accounts.google.com/o/oauth2/v2/auth", "openid email profile"],
    github: ["https://github.com/login/oauth/authorize", "read:user user:email"],
    microsoft: [
      "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize",
      "openid email profile",
    ],
  };
  for (const [provider, [authorize, scope]] of Object.entries(expected)) {
    const res = await api.startOAuth(config, provider);
    assert.equal(res.status, 302);
    const url = new URL(res.headers.get("location"));
    assert.equal(url.origin + url.pathname, authorize);
    const q = url.searchParams;
    assert.equal(q.get("client_id"), "cid");
    assert.equal(q.get("redirect_uri"), `https://site.example/api/auth/oauth/${provider}/callback`);
    assert.equal(q.get("scope"), scope);
    assert.equal(q.get("response_type"), "code");
    assert.match(q.get("state"), /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get("code_challenge"), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get("code_challenge_method"), "S256");
    const setCookie = res.headers.get("set-cookie");
    assert.match(
      setCookie,
      /^__Host-gatehouse-oauth=[A-Za-z0-9_.-]+; HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=600$/,
    );
    assert.ok(!setCookie.includes(q.get("state")), "the cookie is signed, not the bare state");
  }
  const common = await api.startOAuth({ ...config, clients: { microsoft: client } }, "microsoft");
  assert.match(
    common.headers.get("location"),
    /^https:\/\/login\.microsoftonline\.com\/common\/oauth2\/v2\.0\/authorize\?/,
  );
  await assert.rejects(api.startOAuth({ ...config, clients: {} }, "github"), {
    code: "not_configured",
  });
  await assert.rejects(api.startOAuth(config, "gitlab"), { code: "not_configured" });
  assert.equal(
    api.clearOAuthStateCookie(config),
    "__Host-gatehouse-oauth=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0",
  );
});

test("oauth: full flow succeeds for every provider", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "ok");
  assert.deepEqual(await flow(api, config, "google"), {
    ok: true,
    user: {
      provider: "google",
      providerUserId: "110169484474386276334",
      email: "ada@example.com",
      emailVerified: true,
      name: "Ada Lovelace",
    },
  });
  assert.deepEqual(await flow(api, config, "github"), {
    ok: true,
    user: {
      provider: "github",
      providerUserId: "583231",
      email: "octocat@example.com",
      emailVerified: true,
      name: "The Octocat",
    },
  });
  assert.deepEqual(await flow(api, config, "microsoft"), {
    ok: true,
    user: {
      provider: "microsoft",
      providerUserId: "OLu859SGc2Sr9ZsqbkG-QbeLgJlb41KcdiPoLYNpSFA",
      email: "grace@contoso.example",
      emailVerified: true,
      name: "Grace Hopper",
    },
  });
  const tenant = oauthConfig(providerUrl, "ok");
  tenant.clients.microsoft.tenantId = "organizations";
  assert.equal((await flow(api, tenant, "microsoft")).ok, true);
}, { provider: true });

test("oauth: GitHub falls back to the primary verified address", async ({ api, providerUrl }) => {
  const result = await flow(api, oauthConfig(providerUrl, "private"), "github");
  assert.deepEqual(result, {
    ok: true,
    user: {
      provider: "github",
      providerUserId: "583231",
      email: "octo-primary@example.com",
      emailVerified: true,
      name: "The Octocat",
    },
  });
}, { provider: true });

test("oauth: unverified e-mail fails for every provider", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "unverified");
  for (const p of ["google", "github", "microsoft"]) {
    assert.deepEqual(await flow(api, config, p), { ok: false, error: "email_unverified" }, p);
  }
}, { provider: true });

test("oauth: denied consent is access_denied", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "deny");
  for (const p of ["google", "github", "microsoft"]) {
    assert.deepEqual(await flow(api, config, p), { ok: false, error: "access_denied" }, p);
  }
}, { provider: true });

test(
  "oauth: state mismatch, missing, foreign or expired state cookie is invalid_state",
  async ({ api, providerUrl }) => {
    const config = oauthConfig(providerUrl, "ok");
    const invalid = { ok: false, error: "invalid_state" };
    for (const p of ["google", "github", "microsoft"]) {
      assert.deepEqual(await flow(api, config, p, { state: "x".repeat(43) }), invalid, p);
      assert.deepEqual(await flow(api, config, p, { cookie: "" }), invalid, p);
      // a cookie from another start (another state) of the same provider
      const other = cookiePair((await api.startOAuth(config, p)).headers.get("set-cookie"));
      assert.deepEqual(await flow(api, config, p, { cookie: other }), invalid, p);
      // the state cookie expires after 10 minutes
      assert.deepEqual(
        await flow(api, config, p, { options: { now: Date.now() + 601_000 } }),
        invalid,
        p,
      );
    }
    // a state cookie bound to another provider
    const gh = cookiePair((await api.startOAuth(config, "github")).headers.get("set-cookie"));
    assert.deepEqual(await flow(api, config, "google", { cookie: gh }), invalid);
    // a state cookie signed with another secret
    const foreign = { ...config, stateSecret: "attacker" };
    const forged = cookiePair((await api.startOAuth(foreign, "google")).headers.get("set-cookie"));
    assert.deepEqual(await flow(api, config, "google", { cookie: forged }), invalid);
  },
  { provider: true },
);

test(
  "oauth: exchange and profile failures, unconfigured provider",
  async ({ api, providerUrl }) => {
    for (const p of ["google", "github", "microsoft"]) {
      assert.deepEqual(await flow(api, oauthConfig(providerUrl, "exchange-fail"), p), {
        ok: false,
        error: "exchange_failed",
      }, p);
      assert.deepEqual(await flow(api, oauthConfig(providerUrl, "profile-fail"), p), {
        ok: false,
        error: "profile_failed",
      }, p);
    }
    // wrong client secret: the provider refuses the exchange
    const wrong = oauthConfig(providerUrl, "ok");
    wrong.clients.github.clientSecret = "not-the-secret";
    assert.deepEqual(await flow(api, wrong, "github"), { ok: false, error: "exchange_failed" });
    // a callback with valid state but no code
    const config = oauthConfig(providerUrl, "ok");
    const start = await api.startOAuth(config, "google");
    const state = new URL(start.headers.get("location")).searchParams.get("state");
    const req = new Request(`https://site.example/api/auth/oauth/google/callback?state=${state}`, {
      headers: { cookie: cookiePair(start.headers.get("set-cookie")) },
    });
    assert.deepEqual(await api.handleOAuthCallback(config, "google", req), {
      ok: false,
      error: "invalid_request",
    });
    assert.deepEqual(await api.handleOAuthCallback({ ...config, clients: {} }, "google", req), {
      ok: false,
      error: "not_configured",
    });
    assert.deepEqual(await api.handleOAuthCallback(config, "gitlab", req), {
      ok: false,
      error: "not_configured",
    });
  },
  { provider: true },
);
