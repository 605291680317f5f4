/**
 * fast-check generator of Caddy-syntax site configs made of directives Caddy 2.6.2 and the
 * Gatehousefile share, written as text; adapting them gives JSON of the adapter's own shape,
 * which the JSON → Gatehousefile direction must turn back into text that adapts the same.
 */
import fc from "fast-check";
import { rawWord } from "../../../lib/server/adapters/gatehousefile/reverse/tokens.ts";

const text = fc.oneof(
  fc.constantFrom("hello", "two words", 'say "hi"', "{host}", "a\\b", "#not a comment", "/x"),
  fc.string({ minLength: 1, maxLength: 12 }).filter((s) =>
    !s.includes("{") && !s.includes("}") && !s.includes("`") && !s.includes("\\") &&
    !/[\r\u0085\u2028\u2029]/.test(s) && s.trim() === s
  ),
);
const q = (s: string) => {
  const t = rawWord(s);
  return t.quote === '"' ? `"${s.replaceAll('"', '\\"')}"` : t.quote === "`" ? "`" + s + "`" : s;
};
const path = fc.constantFrom("/api/*", "/static/*", "/a", "/b/c*", "/health");
const matcher = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  { weight: 2, arbitrary: path },
  { weight: 1, arbitrary: fc.constantFrom("@get", "@hdr", "@notpost") },
);
const header = fc.constantFrom("X-One", "X-Two", "Cache-Control");

const directive: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(matcher, text).map(([m, t]) => `respond ${m} ${q(t)}`),
  fc.tuple(matcher, text, fc.constantFrom("200", "404", "503")).map(([m, t, s]) =>
    `respond ${m} ${q(t)} ${s}`
  ),
  fc.tuple(matcher, header, text).map(([m, h, t]) => `header ${m} ${h} ${q(t)}`),
  fc.tuple(matcher, header).map(([m, h]) => `header ${m} -${h}`),
  fc.tuple(matcher, header, text).map(([m, h, t]) => `request_header ${m} ${h} ${q(t)}`),
  fc.tuple(matcher, fc.constantFrom("/srv", "/var/www")).map(([m, r]) => `root ${m || "*"} ${r}`),
  fc.tuple(matcher, fc.constantFrom("/new", "/index.html")).map(([m, u]) =>
    `rewrite ${m || "*"} ${u}`
  ),
  fc.tuple(matcher, path).map(([m, p]) => `uri ${m} strip_prefix ${p.replace("*", "")}`),
  fc.tuple(matcher, fc.constantFrom("https://example.com", "/elsewhere")).map(([m, u]) =>
    `redir ${m || "*"} ${u} permanent`
  ),
  matcher.map((m) => `encode ${m} gzip`),
  matcher.map((m) => `file_server ${m}`),
  fc.tuple(matcher, fc.constantFrom("127.0.0.1:9000", "localhost:8081")).map(([m, u]) =>
    `reverse_proxy ${m} ${u}`
  ),
  fc.tuple(path, text).map(([p, t]) => `handle ${p} {\n\t\trespond ${q(t)}\n\t}`),
  fc.tuple(path, text).map(([p, t]) => `handle_path ${p} {\n\t\trespond ${q(t)}\n\t}`),
  fc.tuple(matcher, text).map(([m, t]) =>
    `route ${m} {\n\t\trespond ${q(t)}\n\t\theader X-R 1\n\t}`
  ),
  fc.tuple(matcher, text).map(([m, t]) => `error ${m} ${q(t)} 500`),
  matcher.map((m) => `abort ${m}`),
);

const MATCHER_DEFS = [
  "@get method GET",
  "@hdr header X-Test yes",
  "@notpost not method POST",
];

/** One site block: an address and a few directives (named matchers defined when used). */
export const siteText = (address: string): fc.Arbitrary<string> =>
  fc.array(directive, { minLength: 1, maxLength: 6 }).map((dirs) => {
    const body = dirs.map((d) => `\t${d.replace(/  +/g, " ")}`);
    const defs = MATCHER_DEFS.filter((m) => dirs.some((d) => d.includes(m.split(" ")[0] + " ")))
      .map((m) => `\t${m}`);
    return `${address} {\n${[...defs, ...body].join("\n")}\n}\n`;
  });

/** A Caddyfile of one to three sites on distinct addresses. */
export const caddyfileText: fc.Arbitrary<string> = fc.uniqueArray(
  fc.constantFrom(
    ":8080",
    "localhost",
    "example.com",
    "http://a.example",
    ":9090",
    "b.example:8443",
  ),
  { minLength: 1, maxLength: 3 },
).chain((addrs) => fc.tuple(...addrs.map(siteText)).map((sites) => sites.join("\n")));
