/**
 * Cases for TOTP (RFC 6238) and HOTP (RFC 4226): the RFCs' test vectors first, then base32,
 * the verification window, malformed codes and the otpauth URI.
 *
 * @module
 */
import assert from "node:assert/strict";
import { test } from "./_harness.mjs";

const ascii = (s) => new TextEncoder().encode(s);
// RFC 6238 appendix B: one seed per hash, the ASCII digits repeated to the hash's length.
const SEEDS = {
  "SHA-1": ascii("12345678901234567890"),
  "SHA-256": ascii("12345678901234567890123456789012"),
  "SHA-512": ascii("1234567890123456789012345678901234567890123456789012345678901234"),
};
const VECTORS = [
  [59, "94287082", "46119246", "90693936"],
  [1111111109, "07081804", "68084774", "25091201"],
  [1111111111, "14050471", "67062674", "99943326"],
  [1234567890, "89005924", "91819424", "93441116"],
  [2000000000, "69279037", "90698825", "38618901"],
  [20000000000, "65353130", "77737706", "47863826"],
];

test("totp: the test vectors of RFC 6238 (SHA-1, SHA-256, SHA-512, 8 digits)", async ({ api }) => {
  for (const [seconds, ...codes] of VECTORS) {
    for (const [i, algorithm] of ["SHA-1", "SHA-256", "SHA-512"].entries()) {
      const code = await api.totp(SEEDS[algorithm], { now: seconds * 1000, digits: 8, algorithm });
      assert.equal(code, codes[i], `${algorithm} at ${seconds}`);
    }
  }
});

test("totp: the HOTP test vectors of RFC 4226 (appendix D)", async ({ api }) => {
  const expected = [
    "755224",
    "287082",
    "359152",
    "969429",
    "338314",
    "254676",
    "287922",
    "162583",
    "399871",
    "520489",
  ];
  for (let c = 0; c < expected.length; c++) {
    assert.equal(await api.hotp(SEEDS["SHA-1"], c), expected[c]);
  }
});

test("totp: base32 round trip, RFC 4648 vectors, lenient reading, strict refusals", ({ api }) => {
  const vectors = [["", ""], ["f", "MY"], ["fo", "MZXQ"], ["foo", "MZXW6"], ["foob", "MZXW6YQ"], [
    "fooba",
    "MZXW6YTB",
  ], ["foobar", "MZXW6YTBOI"]];
  for (const [plain, encoded] of vectors) {
    assert.equal(api.base32Encode(ascii(plain)), encoded);
    assert.equal(new TextDecoder().decode(api.base32Decode(encoded)), plain);
  }
  assert.equal(new TextDecoder().decode(api.base32Decode("mzxw 6ytb-oi======")), "foobar");
  for (const bad of ["M", "MZX", "MZXW6Y", "MZXW1", "MZXW!", 7, null]) {
    assert.equal(api.base32Decode(bad), null, String(bad));
  }
  const secret = api.generateTotpSecret();
  assert.equal(secret.length, api.TOTP_SECRET_BYTES);
  assert.deepEqual(api.base32Decode(api.base32Encode(secret)), secret);
  return Promise.resolve();
});

test("totp: verification accepts ±1 step, answers the step, refuses malformed codes", async ({ api }) => {
  const secret = SEEDS["SHA-1"];
  const now = 1111111111 * 1000;
  const step = api.totpStep(now);
  assert.equal(step, Math.floor(1111111111 / 30));
  for (const d of [-1, 0, 1]) {
    const code = await api.totp(secret, { now: now + d * 30_000 });
    assert.equal(await api.verifyTotp(secret, code, { now }), step + d, `step ${d}`);
    assert.equal(
      await api.verifyTotp(secret, code.slice(0, 3) + " " + code.slice(3), { now }),
      step + d,
    );
  }
  for (const d of [-2, 2]) {
    const code = await api.totp(secret, { now: now + d * 30_000 });
    assert.equal(await api.verifyTotp(secret, code, { now }), null, `step ${d}`);
    assert.equal(await api.verifyTotp(secret, code, { now, window: 2 }), step + d);
  }
  const right = await api.totp(secret, { now });
  assert.equal(await api.verifyTotp(secret, right, { now, window: 0 }), step);
  for (const bad of ["", "12345", "1234567", "abcdef", "12345x", null, 123456, right + "0"]) {
    assert.equal(await api.verifyTotp(secret, bad, { now }), null, String(bad));
  }
  await assert.rejects(api.verifyTotp(secret, right, { now, window: 11 }), {
    code: "invalid_options",
  });
  await assert.rejects(api.verifyTotp(ascii("short"), right, { now }), { code: "invalid_secret" });
  await assert.rejects(api.totp(secret, { digits: 9 }), { code: "invalid_options" });
  await assert.rejects(api.totp(secret, { algorithm: "MD5" }), { code: "invalid_options" });
});

test("totp: the otpauth URI of the Key Uri Format", ({ api }) => {
  const secret = SEEDS["SHA-1"];
  assert.equal(
    api.totpUri({ secret, account: "ada@example.com", issuer: "Example Co" }),
    "otpauth://totp/Example%20Co:ada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example%20Co",
  );
  assert.equal(
    api.totpUri({ secret, account: "a", issuer: "X", algorithm: "SHA-256", digits: 8, period: 60 }),
    "otpauth://totp/X:a?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=X&algorithm=SHA256&digits=8&period=60",
  );
  assert.throws(() => api.totpUri({ secret, account: "a", issuer: "a:b" }), {
    code: "invalid_options",
  });
  assert.throws(() => api.totpUri({ secret, account: "", issuer: "X" }), {
    code: "invalid_options",
  });
  return Promise.resolve();
});
