/**
 * The classification of webhook hosts, as properties: every spelling of an IPv4 or IPv6
 * address that the WHATWG URL parser accepts (decimal, hex, octal, shortened, mixed, trailing
 * dot, full-width digits, percent-escapes, IPv4-mapped and -translated, upper case) is classed
 * exactly as the address itself; the classes agree with an oracle written on octets and groups;
 * and no host the URL parser leaves as a name is an address a resolver would read as one.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type AddressClass,
  classifyAddress,
  classifyHost,
  classifyIP,
  classifyName,
} from "../../lib/mail/address_class.ts";

const MAPPED = 0xffffn << 32n;

/** The oracle for IPv4, on octets (the module works on CIDR masks). */
function v4Oracle(n: number): AddressClass {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const is = (...o: number[]) => o.every((x, i) => [a, b, c, d][i] === x);
  if (is(169, 254, 169, 254) || is(100, 100, 100, 200) || is(192, 0, 0, 192)) return "metadata";
  if (a === 0) return "unspecified";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) {
    return "private";
  }
  if (a === 100 && b >= 64 && b <= 127) return "shared";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local";
  if (is(192, 0, 0) || is(192, 0, 2) || is(192, 88, 99) || is(198, 51, 100) || is(203, 0, 113)) {
    return "reserved";
  }
  if (a === 198 && (b === 18 || b === 19)) return "reserved";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved";
  return "public";
}

/** The oracle for IPv6 (not IPv4-mapped), on its eight groups. */
function v6Oracle(g: number[]): AddressClass {
  const v4 = (hi: number, lo: number) => v4Oracle(((hi << 16) | lo) >>> 0);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 8)) return "unspecified";
  if (zero(0, 7) && g[7] === 1) return "loopback";
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]); // translated
  if (zero(0, 6)) return "reserved"; // IPv4-compatible
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "private";
  if (g[0] === 0x100 && zero(1, 4)) return "reserved";
  if (g[0] === 0x2001 && g[1] < 0x200) return "reserved";
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "reserved";
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  if (g[0] === 0x3fff && g[1] < 0x1000) return "reserved";
  if (g[0] === 0x5f00) return "reserved";
  if (g[0] === 0xfd00 && g[1] === 0xec2 && zero(2, 7) && g[7] === 0x254) return "metadata";
  if ((g[0] & 0xfe00) === 0xfc00) return "private";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "private";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if ((g[0] & 0xe000) === 0x2000) return "public";
  return "reserved";
}

/** IPv4 addresses, mostly near the interesting ranges. */
const v4 = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.tuple(
    fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 239, 240, 255, 8, 1),
    fc.oneof(fc.constantFrom(0, 2, 16, 18, 31, 51, 64, 88, 100, 127, 168, 254, 255), fc.nat(255)),
    fc.oneof(fc.constantFrom(0, 2, 99, 100, 113, 169, 255), fc.nat(255)),
    fc.oneof(fc.constantFrom(0, 1, 192, 200, 254, 255), fc.nat(255)),
  ).map(([a, b, c, d]) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0),
);

type Radix = "dec" | "hex" | "HEX" | "oct";
function spell(n: number, radix: Radix): string {
  if (radix === "hex") return "0x" + n.toString(16);
  if (radix === "HEX") return "0X" + n.toString(16).toUpperCase();
  if (radix === "oct") return n === 0 ? "0" : "0" + n.toString(8);
  return String(n);
}

const radix = fc.constantFrom<Radix>("dec", "hex", "HEX", "oct");

/** A spelling of `n` in 1 to 4 parts, each part in its own radix. */
const v4Spelling = fc.tuple(
  v4,
  fc.integer({ min: 1, max: 4 }),
  fc.array(radix, { minLength: 4, maxLength: 4 }),
  fc.boolean(),
).map(([n, parts, radixes, dot]) => {
  const octets = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const head = octets.slice(0, parts - 1);
  // the last part holds the remaining bytes
  const rest = octets.slice(parts - 1).reduce((acc, o) => acc * 256 + o, 0);
  const text = [...head, rest].map((p, i) => spell(p, radixes[i])).join(".");
  return { n, text: text + (dot ? "." : "") };
});

const FULL_WIDTH = (s: string) =>
  s.replace(/[0-9.]/g, (c) => c === "." ? "\uff0e" : String.fromCharCode(0xff10 + Number(c)));
const PERCENT = (s: string) =>
  s.replace(/[0-9]/g, (c) => "%" + c.charCodeAt(0).toString(16).padStart(2, "0"));

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

function hostOf(spelling: string): ReturnType<typeof classifyHost> {
  return classifyHost(new URL(`http://${spelling}:8080/hook`).hostname);
}

Deno.test("address classes: every IPv4 spelling the URL parser accepts is classed as the address", () => {
  fc.assert(
    fc.property(
      v4Spelling,
      fc.constantFrom("plain", "full-width", "percent"),
      ({ n, text }, how) => {
        const spelling = how === "plain"
          ? text
          : how === "full-width"
          ? FULL_WIDTH(dotted(n))
          : PERCENT(dotted(n));
        const host = hostOf(spelling);
        assert.equal(host.kind, "ip", spelling);
        if (host.kind !== "ip") return;
        assert.equal(host.ip, MAPPED | BigInt(n), spelling);
        assert.equal(host.class, v4Oracle(n), `${spelling} (${dotted(n)})`);
        assert.equal(classifyAddress(dotted(n)), host.class);
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("address classes: IPv4-mapped and -translated IPv6 spellings are classed by their IPv4 address", () => {
  fc.assert(
    fc.property(
      v4,
      fc.constantFrom("mapped-dotted", "mapped-hex", "mapped-full", "translated", "MAPPED"),
      (n, form) => {
        const hi = (n >>> 16).toString(16);
        const lo = (n & 0xffff).toString(16);
        const spelling = {
          "mapped-dotted": `[::ffff:${dotted(n)}]`,
          "mapped-hex": `[::ffff:${hi}:${lo}]`,
          "mapped-full": `[0:0:0:0:0:ffff:${dotted(n)}]`,
          translated: `[::ffff:0:${dotted(n)}]`,
          MAPPED: `[::FFFF:${hi.toUpperCase()}:${lo.toUpperCase()}]`,
        }[form];
        assert.equal(hostOf(spelling).class, v4Oracle(n), `${spelling} (${dotted(n)})`);
      },
    ),
    { numRuns: 2000 },
  );
});

const group = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(0, 1, 0x64, 0xff9b, 0x100, 0x2001, 0xdb8, 0x2002, 0x3fff, 0x5f00, 0xfc00),
  fc.constantFrom(0xfd00, 0xec2, 0x254, 0xfe80, 0xfec0, 0xff02, 0xffff, 0x2606, 0x4700),
);

Deno.test("address classes: IPv6 in full, compressed or mixed spelling is classed as the address (oracle on groups)", () => {
  fc.assert(
    fc.property(
      fc.array(group, { minLength: 8, maxLength: 8 }),
      fc.constantFrom("full", "upper", "mixed", "zeros"),
      fc.boolean(),
      (g, form, shortZeros) => {
        if (shortZeros) { for (let i = 2; i < 6; i++) g[i] = 0; }
        const hex = g.map((x) => x.toString(16));
        const spelling = form === "full"
          ? hex.join(":")
          : form === "upper"
          ? hex.join(":").toUpperCase()
          : form === "mixed"
          ? `${hex.slice(0, 6).join(":")}:${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`
          : g.map((x) => x.toString(16).padStart(4, "0")).join(":");
        const host = hostOf(`[${spelling}]`);
        assert.equal(host.kind, "ip");
        if (host.kind !== "ip") return;
        const value = g.reduce((acc, x) => (acc << 16n) | BigInt(x), 0n);
        assert.equal(host.ip, value, spelling);
        const mapped = (value >> 32n) === 0xffffn;
        const want = mapped ? v4Oracle(Number(value & 0xffffffffn)) : v6Oracle(g);
        assert.equal(host.class, want, spelling);
        assert.equal(classifyIP(value), want);
      },
    ),
    { numRuns: 3000 },
  );
});

/** inet_aton's reading of a host (what a resolver would take as an address), or null. */
function inetAton(name: string): number | null {
  const parts = name.split(".");
  if (parts.length > 4 || parts.some((p) => !/^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i.test(p))) {
    return null;
  }
  const nums = parts.map((p) =>
    /^0x/i.test(p) ? parseInt(p.slice(2) || "0", 16) : /^0/.test(p) ? parseInt(p, 8) : Number(p)
  );
  return nums.length ? nums[0] : null;
}

Deno.test("address classes: any host the URL parser accepts is classed without throwing, and a name is never a numeric address", () => {
  const chars = fc.constantFrom(..."0123456789abcdefxX.:[]-_%ｘ０１．".split(""));
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: chars, maxLength: 30 })),
      (s) => {
        let hostname: string;
        try {
          hostname = new URL(`http://${s}/`).hostname;
        } catch {
          return; // refused by the parser: never saved
        }
        const host = classifyHost(hostname);
        if (host.kind === "name") {
          // what the resolver gets is the URL's host name
          assert.equal(inetAton(hostname), null, `${JSON.stringify(s)} -> ${hostname}`);
          assert.equal(host.class, classifyName(hostname));
        }
      },
    ),
    { numRuns: 5000 },
  );
});

Deno.test("address classes: names", () => {
  const cases: [string, AddressClass][] = [
    ["localhost", "loopback"],
    ["LOCALHOST.", "loopback"],
    ["app.localhost", "loopback"],
    ["metadata.google.internal", "metadata"],
    ["metadata.goog", "metadata"],
    ["metadata", "metadata"],
    ["intranet", "local-name"],
    ["db.internal", "local-name"],
    ["printer.local", "local-name"],
    ["nas.home.arpa", "local-name"],
    ["box.localdomain", "local-name"],
    ["hooks.example.com", "public"],
    ["xn--bcher-kva.example", "public"],
  ];
  for (const [name, want] of cases) {
    assert.equal(hostOf(name).class, want, name);
  }
});
