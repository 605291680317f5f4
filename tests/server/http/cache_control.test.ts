/**
 * The `Cache-Control` parser and writer (RFC 9111 §5.2, RFC 9110 §5.6), fuzzed both ways:
 * directives written and parsed come back the same, any text parses without throwing and
 * reads the same once written back; and the HTTP-date parser (RFC 9110 §5.6.7).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  deltaSeconds,
  type Directives,
  fieldNames,
  formatCacheControl,
  MAX_DELTA_SECONDS,
  parseCacheControl,
} from "../../../lib/server/http/handlers/cache/cache_control.ts";
import { httpDate, parseHttpDate } from "../../../lib/server/http/handlers/cache/http_date.ts";

const TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz";
const name = fc.string({ unit: fc.constantFrom(...TCHARS), minLength: 1, maxLength: 12 });
// a value may hold any character a quoted-string can carry (HTAB, SP, VCHAR, obs-text)
const valueChar = fc.oneof(
  fc.constantFrom("\t", " ", '"', "\\", ",", "=", ";"),
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
);
const value = fc.oneof(fc.constant(true as const), fc.string({ unit: valueChar, maxLength: 20 }));
const directives = fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 8 })
  .map((list) => new Map(list) as Directives);

Deno.test("Cache-Control: directives written then parsed are the same (fuzz)", () => {
  fc.assert(
    fc.property(directives, (d) => {
      assert.deepEqual([...parseCacheControl(formatCacheControl(d))], [...d]);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("Cache-Control: any text parses without throwing, and reads the same once written back (fuzz)", () => {
  const anyText = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.string({
      unit: fc.constantFrom(..."max-age=,\" \\\tpublic;no-cache=private'0123456789"),
      maxLength: 60,
    }),
  );
  fc.assert(
    fc.property(anyText, (s) => {
      const d = parseCacheControl(s);
      for (const k of d.keys()) assert.match(k, /^[!#$%&'*+\-.^_`|~0-9a-z]+$/);
      assert.deepEqual([...parseCacheControl(formatCacheControl(d))], [...d]);
    }),
    { numRuns: 5000 },
  );
});

Deno.test("Cache-Control: the cases RFC 9111 names", () => {
  const d = parseCacheControl(
    'Max-Age=60, s-maxage="120", no-cache="Set-Cookie, X-A", private, junk junk, stale-if-error=9, max-age=1',
  );
  // names are case-insensitive, a quoted delta-seconds is read, the first max-age wins
  assert.equal(deltaSeconds(d, "max-age"), 60);
  assert.equal(deltaSeconds(d, "s-maxage"), 120);
  assert.deepEqual(fieldNames(d, "no-cache"), ["set-cookie", "x-a"]);
  assert.deepEqual(fieldNames(d, "private"), []);
  assert.equal(d.has("junk"), false, "an element that is no directive is skipped");
  assert.equal(deltaSeconds(d, "stale-if-error"), 9);
  // delta-seconds beyond 2^31 are 2^31; an invalid one is 0 (stale, not fresh)
  assert.equal(
    deltaSeconds(parseCacheControl("max-age=99999999999999"), "max-age"),
    MAX_DELTA_SECONDS,
  );
  assert.equal(deltaSeconds(parseCacheControl("max-age=-1"), "max-age"), 0);
  assert.equal(deltaSeconds(parseCacheControl("max-age"), "max-age"), 0);
  assert.equal(deltaSeconds(parseCacheControl(""), "max-age"), undefined);
  assert.deepEqual([...parseCacheControl(" , ,no-store ,, ")], [["no-store", true]]);
  assert.equal(
    formatCacheControl(new Map([["max-age", "5"], ["no-cache", "a, b"], ["x", 'q"\\']])),
    'max-age=5, no-cache="a, b", x="q\\"\\\\"',
  );
});

Deno.test("HTTP-date: the three forms, in UTC; anything else is no date", () => {
  const t = 784111777000;
  assert.equal(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), t);
  assert.equal(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), t);
  assert.equal(parseHttpDate("Sun Nov  6 08:49:37 1994"), t);
  assert.equal(httpDate(t), "Sun, 06 Nov 1994 08:49:37 GMT");
  for (
    const bad of [
      "0",
      "-1",
      "",
      "tomorrow",
      "Sun, 06 Nov 1994 25:49:37 GMT",
      "Sun, 32 Nov 1994 08:49:37 GMT",
    ]
  ) {
    assert.ok(Number.isNaN(parseHttpDate(bad)), bad);
  }
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4102444800 }), (s) => {
      assert.equal(parseHttpDate(httpDate(s * 1000)), s * 1000);
    }),
  );
});
