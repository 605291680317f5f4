/**
 * Cases for allowlists and access modes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { test } from "./_harness.mjs";

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

test("access: one canonical form; Unicode look-alikes never match an ASCII address", ({ api }) => {
  const kelvin = "\u212Aate@example.com"; // KELVIN SIGN: lowercases and normalizes to "k"
  assert.equal(api.canonicalEmail("  Kate@Example.COM "), "kate@example.com");
  assert.equal(api.canonicalEmail(kelvin), kelvin);
  assert.equal(api.canonicalEmail("no-at-sign"), null);
  assert.equal(api.canonicalEmail(42), null);
  const localLookAlikes = [
    kelvin,
    "\u212AATE@example.com",
    "\uFF4Bate@example.com", // FULLWIDTH k (NFKC: k)
    "k\u0430te@example.com", // CYRILLIC a
    "kat\u0435@example.com", // CYRILLIC e
    "\u0138ate@example.com", // KRA
  ];
  for (const email of localLookAlikes) {
    assert.equal(api.isOwner("kate@example.com", email), false, email);
    assert.equal(api.emailAllowed({ mode: "owners", email, owners: "Kate@Example.com" }), false);
    assert.equal(api.emailAllowed({ mode: "domain", email, owners: "kate@example.com" }), false);
  }
  const domainLookAlikes = [
    "kate@examp\u217Ce.com", // SMALL ROMAN NUMERAL FIFTY (NFKC: l)
    "kate@example.\u0441om", // CYRILLIC es
    "kate@\u212Aexample.com",
  ];
  for (const email of domainLookAlikes) {
    assert.equal(api.emailAllowed({ mode: "domain", email, domains: "example.com" }), false);
    assert.equal(api.emailAllowed({ mode: "domain", email, domains: "kexample.com" }), false);
  }
  assert.equal(api.isOwner("kate@example.com", " KATE@EXAMPLE.COM "), true);
  // A listed look-alike matches only itself, and list entries are canonical too.
  assert.equal(api.isOwner(` ${kelvin.toUpperCase()} `, kelvin.toUpperCase()), true);
  assert.equal(api.isOwner(kelvin, "kate@example.com"), false);
  assert.equal(
    api.emailAllowed({ mode: "domain", email: "x@kexample.com", domains: "\u212Aexample.com" }),
    false,
  );
  assert.equal(
    api.emailAllowed({ mode: "domain", email: "x@\u212Aexample.com", domains: "kexample.com" }),
    false,
  );
  assert.equal(
    api.emailAllowed({ mode: "domain", email: "x@KExample.com", domains: "kexample.COM" }),
    true,
  );
  assert.equal(api.parseAccessMode("PUBLIC"), "public");
  return Promise.resolve();
});
