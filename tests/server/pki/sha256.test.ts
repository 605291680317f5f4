/**
 * The synchronous SHA-256 against FIPS 180-4's examples and against Web Crypto on arbitrary
 * bytes, every length around the padding's block boundaries included.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { sha256, sha256Hex } from "../../../lib/server/pki/sha256.ts";

const enc = new TextEncoder();
const webHex = async (b: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", b as Uint8Array<ArrayBuffer>))]
    .map((x) => x.toString(16).padStart(2, "0")).join("");

Deno.test("sha256: FIPS 180-4 examples", () => {
  assert.equal(
    sha256Hex(enc.encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex(new Uint8Array(0)),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assert.equal(
    sha256Hex(enc.encode("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  assert.equal(
    sha256Hex(enc.encode("a".repeat(1_000_000))),
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
  );
  assert.equal(sha256(enc.encode("abc")).length, 32);
});

Deno.test("sha256: every length from 0 to 200 bytes and arbitrary bytes agree with Web Crypto", async () => {
  for (let n = 0; n <= 200; n++) {
    const b = crypto.getRandomValues(new Uint8Array(n));
    assert.equal(sha256Hex(b), await webHex(b), `length ${n}`);
  }
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), async (b) => {
      assert.equal(sha256Hex(b), await webHex(b));
    }),
    { numRuns: 300 },
  );
});
