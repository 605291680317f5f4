import assert from "node:assert/strict";
import { checkPassword, normalizeEmail, normalizeName, PASSWORD_LENGTH } from "../../d1.ts";

Deno.test("password policy: NIST SP 800-63B length bounds, no composition rules", () => {
  assert.equal(PASSWORD_LENGTH.min, 8);
  assert.ok(PASSWORD_LENGTH.max >= 64);
  assert.equal(checkPassword("abcdefg"), "password_too_short");
  assert.equal(checkPassword("mzqvtrpw"), null, "eight lowercase letters are enough");
  assert.equal(checkPassword("x".repeat(64)), null, "64 characters are accepted");
  assert.equal(checkPassword("x".repeat(PASSWORD_LENGTH.max)), null);
  assert.equal(checkPassword("x".repeat(PASSWORD_LENGTH.max + 1)), "password_too_long");
  assert.equal(checkPassword("🔑🔑🔑🔑🔑🔑🔑🔑"), null, "length counts code points; emoji allowed");
  assert.equal(checkPassword("🔑🔑🔑🔑🔑🔑🔑"), "password_too_short");
  assert.equal(checkPassword("with spaces in it"), null);
  assert.equal(checkPassword("Password1"), "password_common");
  assert.equal(checkPassword("ada@example.com", { email: "ada@example.com" }), "password_common");
  assert.equal(checkPassword("lovelace", { email: "lovelace@example.com" }), "password_common");
  assert.equal(checkPassword("acme shop", { appName: "Acme Shop" }), "password_common");
});

Deno.test("e-mail and name normalization", () => {
  assert.equal(normalizeEmail("  Ada@Example.COM "), "ada@example.com");
  for (
    const bad of [
      "",
      "a",
      "a@b",
      "@b.co",
      "a@@b.co",
      "a b@c.co",
      "a@b.co\u0000x",
      `${"a".repeat(65)}@b.co`,
      5,
      null,
    ]
  ) {
    assert.equal(normalizeEmail(bad), null, String(bad));
  }
  assert.equal(normalizeName("  Ada  "), "Ada");
  assert.equal(normalizeName("\u0007"), null);
  assert.equal(normalizeName(""), null);
});
