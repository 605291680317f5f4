/**
 * Core throughput side by side with `jose` HS256 (`SignJWT` / `jwtVerify`) in the same run:
 * session cookies, generic tokens and relay tokens against JWTs of similar content. The goal:
 * `readSession` at least 1.5x the throughput of jose's `jwtVerify` (jose used as its README
 * shows: the secret as bytes). A jose variant with a pre-imported `CryptoKey` is shown too.
 * `readSession` is measured twice: with the same cookie again and again (what a browser sends;
 * answered from the verified-cookie cache) and with a new cookie each call (the HMAC runs).
 * Also times `hashPassword` at the default 600,000 iterations.
 *
 * Each token benchmark iteration runs a batch of 100 sequential calls (time/iter is per batch:
 * divide by 100 for one call), so the harness's fixed per-iteration cost does not hide the
 * difference between the calls.
 *
 * ```sh
 * deno bench -A bench/auth_bench.ts
 * ```
 *
 * @module
 */
import { jwtVerify, SignJWT } from "jose";
import {
  createSessionCookie,
  hashPassword,
  readSession,
  signRelay,
  signToken,
  verifyPassword,
  verifyRelay,
  verifyToken,
} from "../mod.ts";

const BATCH = 100;
const SECRET = "bench-session-secret-0123456789abcdef0123456789";
const session = { secret: SECRET, cookieName: "__Host-session" };
const subject = "owner@example.com";
const joseSecret = new TextEncoder().encode(SECRET);
const joseKey = await crypto.subtle.importKey(
  "raw",
  joseSecret,
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign", "verify"],
);

const setCookie = await createSessionCookie(session, subject);
const request = new Request("https://site.example/", {
  headers: { cookie: `theme=dark; ${setCookie.split(";")[0]}` },
});
// First sight: distinct cookies in turn, more of them than readSession's verified-cookie cache
// keeps (1,024), so every read runs the HMAC, as for a session this process has not seen yet.
const fresh: Request[] = [];
for (let i = 0; i < 4096; i++) {
  const c = await createSessionCookie(session, `user${i}@example.com`);
  fresh.push(
    new Request("https://site.example/", {
      headers: { cookie: `theme=dark; ${c.split(";")[0]}` },
    }),
  );
}
let nextFresh = 0;
const readFresh = () => readSession(session, fresh[nextFresh++ % fresh.length]);
const token = await signToken(SECRET, {
  purpose: "reset",
  payload: { userId: 42 },
  ttlSeconds: 3600,
});
const relayClaims = { email: subject, provider: "github", nonce: "n-0123456789" };
const relay = await signRelay(SECRET, relayClaims);

function jwt(): Promise<string> {
  return new SignJWT({ sub: subject }).setProtectedHeader({ alg: "HS256" }).setIssuedAt()
    .setExpirationTime("7d").sign(joseSecret);
}
const jwtToken = await jwt();
const jwtRequest = new Request("https://site.example/", {
  headers: { cookie: `theme=dark; __Host-session=${jwtToken}` },
});
function cookieValue(req: Request): string {
  const m = req.headers.get("cookie")!.match(/(?:^|;\s*)__Host-session=([^;]+)/);
  return m![1];
}

// Warm up the JIT for both sides before measuring (the first benchmark must not pay for it).
for (let i = 0; i < 2000; i++) {
  await readSession(session, request);
  await jwtVerify(jwtToken, joseSecret, { algorithms: ["HS256"] });
}

// The goal, measured interleaved so that load from other processes hits both sides alike:
// rounds of 500 calls alternate between readSession and jose's jwtVerify; medians per call.
async function perCall(fn: () => Promise<unknown>, n = 500): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t) / n) * 1000;
}
const ours: number[] = [], firsts: number[] = [], theirs: number[] = [];
for (let round = 0; round < 11; round++) {
  ours.push(await perCall(() => readSession(session, request)));
  firsts.push(await perCall(readFresh));
  theirs.push(await perCall(() => jwtVerify(jwtToken, joseSecret, { algorithms: ["HS256"] })));
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const [a, f, b] = [sorted(ours), sorted(firsts), sorted(theirs)];
const mid = a.length >> 1;
console.log(
  `readSession vs jose jwtVerify, interleaved rounds, µs per call (median, best): ` +
    `repeat cookie ${a[mid].toFixed(1)}, ${a[0].toFixed(1)} (${(b[mid] / a[mid]).toFixed(2)}x); ` +
    `first sight ${f[mid].toFixed(1)}, ${f[0].toFixed(1)} (${(b[mid] / f[mid]).toFixed(2)}x); ` +
    `jose ${b[mid].toFixed(1)}, ${b[0].toFixed(1)}; goal >= 1.5x`,
);

// Sanity: every measured call succeeds.
if (!(await readSession(session, request))) throw new Error("readSession failed");
if (!(await verifyToken(SECRET, token, { purpose: "reset" }))) {
  throw new Error("verifyToken failed");
}
if (!(await verifyRelay(SECRET, relay))) throw new Error("verifyRelay failed");

Deno.bench("readSession", { group: "verify", baseline: true }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await readSession(session, request);
  }
});
Deno.bench("readSession, first sight of each cookie", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await readFresh();
  }
});
Deno.bench("jose jwtVerify HS256 (secret bytes), cookie parsed", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await jwtVerify(cookieValue(jwtRequest), joseSecret, { algorithms: ["HS256"] });
  }
});
Deno.bench("jose jwtVerify HS256 (secret bytes)", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await jwtVerify(jwtToken, joseSecret, { algorithms: ["HS256"] });
  }
});
Deno.bench("jose jwtVerify HS256 (CryptoKey)", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await jwtVerify(jwtToken, joseKey, { algorithms: ["HS256"] });
  }
});
Deno.bench("verifyToken", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await verifyToken(SECRET, token, { purpose: "reset" });
  }
});
Deno.bench("verifyRelay", { group: "verify" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await verifyRelay(SECRET, relay);
  }
});

Deno.bench("createSessionCookie", { group: "sign", baseline: true }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await createSessionCookie(session, subject);
  }
});
Deno.bench("jose SignJWT HS256 (secret bytes)", { group: "sign" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await jwt();
  }
});
Deno.bench("jose SignJWT HS256 (CryptoKey)", { group: "sign" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await new SignJWT({ sub: subject }).setProtectedHeader({ alg: "HS256" }).setIssuedAt()
      .setExpirationTime("7d").sign(joseKey);
  }
});
Deno.bench("signToken", { group: "sign" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await signToken(SECRET, { purpose: "reset", payload: { userId: 42 }, ttlSeconds: 3600 });
  }
});
Deno.bench("signRelay", { group: "sign" }, async () => {
  for (let i = 0; i < BATCH; i++) {
    await signRelay(SECRET, relayClaims);
  }
});

const stored = await hashPassword("correct horse battery staple");
Deno.bench(
  "hashPassword (600,000 iterations)",
  { group: "password", n: 20, warmup: 2 },
  async () => {
    await hashPassword("correct horse battery staple");
  },
);
Deno.bench(
  "verifyPassword (600,000 iterations)",
  { group: "password", n: 20, warmup: 2 },
  async () => {
    await verifyPassword("correct horse battery staple", stored);
  },
);
