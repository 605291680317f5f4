/**
 * fast-check generator of Caddy-syntax site configs made of directives Caddy 2.6.2 and the
 * Gatehousefile share, written as text; adapting them gives JSON of the adapter's own shape,
 * which the JSON → Gatehousefile direction must turn back into text that adapts the same.
 * `gatehousefileText` adds the directives whose expansion changed after Caddy 2.6.2
 * (`php_fastcgi`, `forward_auth`) and site logs, `bind` protocols, for our adapter only.
 */
import fc from "fast-check";
import { rawWord } from "../../../lib/server/caddyfile/writer/tokens.ts";

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

/** Directives our adapter expands as newer Caddy does (2.6.2 writes other JSON). */
const newer: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(
    matcher,
    fc.constantFrom("127.0.0.1:9000", "unix//run/php.sock"),
    fc.constantFrom(
      "",
      " {\n\t\tindex off\n\t}",
      " {\n\t\tindex app.php\n\t}",
      " {\n\t\ttry_files {path} /index.php\n\t}",
      " {\n\t\ttry_files {path} {path}/index.php =404\n\t}",
      " {\n\t\tsplit .php .php5\n\t\tenv APP prod\n\t\troot /srv\n\t\tread_timeout 5s\n\t}",
      " {\n\t\tlb_policy first\n\t\tcapture_stderr\n\t}",
    ),
  ).map(([m, up, block]) => `php_fastcgi ${m} ${up}${block}`),
  fc.tuple(
    matcher,
    fc.constantFrom("/check", "/api/verify?x=1"),
    fc.subarray(["X-User", "Remote-Name>X-Name", "remote-email", "X-B>x-c"]),
  ).map(([m, uri, copy]) =>
    `forward_auth ${m} auth:9091 {\n\t\turi ${uri}${
      copy.length ? `\n\t\tcopy_headers ${copy.join(" ")}` : ""
    }\n\t}`
  ),
);

/** Site-level lines our adapter writes back: logs (with hostnames) and binds with protocols. */
const siteExtras: fc.Arbitrary<string[]> = fc.subarray([
  "log",
  "log {\n\t\toutput file /var/log/a.log {\n\t\t\troll_interval 1h\n\t\t}\n\t\tformat append {\n\t\t\tfields {\n\t\t\t\tn 1\n\t\t\t}\n\t\t}\n\t}",
  "log named {\n\t\thostnames x.example y.example\n\t\tformat journald\n\t}",
  "bind 127.0.0.1 {\n\t\tprotocols h1 h2\n\t}",
], { maxLength: 2 });

const MATCHER_DEFS = [
  "@get method GET",
  "@hdr header X-Test yes",
  "@notpost not method POST",
];

/** One site block: an address and a few directives (named matchers defined when used). */
const siteOf =
  (dirs: fc.Arbitrary<string>, extras: fc.Arbitrary<string[]>) =>
  (address: string): fc.Arbitrary<string> =>
    fc.tuple(fc.array(dirs, { minLength: 1, maxLength: 6 }), extras).map(([dirs, more]) => {
      const body = [...dirs, ...more].map((d) => `\t${d.replace(/  +/g, " ")}`);
      const defs = MATCHER_DEFS.filter((m) => dirs.some((d) => d.includes(m.split(" ")[0] + " ")))
        .map((m) => `\t${m}`);
      return `${address} {\n${[...defs, ...body].join("\n")}\n}\n`;
    });

/** One site block of directives Caddy 2.6.2 shares. */
export const siteText: (address: string) => fc.Arbitrary<string> = siteOf(
  directive,
  fc.constant([]),
);

const addresses = fc.uniqueArray(
  fc.constantFrom(
    ":8080",
    "localhost",
    "example.com",
    "http://a.example",
    ":9090",
    "b.example:8443",
  ),
  { minLength: 1, maxLength: 3 },
);

/** A Caddyfile of one to three sites on distinct addresses. */
export const caddyfileText: fc.Arbitrary<string> = addresses.chain((addrs) =>
  fc.tuple(...addrs.map(siteText)).map((sites) => sites.join("\n"))
);

/** A Caddyfile that also uses the directives and site options only our adapter has. */
export const gatehousefileText: fc.Arbitrary<string> = addresses.chain((addrs) =>
  fc.tuple(...addrs.map(siteOf(fc.oneof(directive, newer), siteExtras))).map((sites) =>
    sites.join("\n")
  )
);
