/**
 * fast-check generators of Gatehousefiles: well-formed structure (sites, directives,
 * arguments, nested blocks, comments) written with messy but meaningful white space, for the
 * formatter and parser properties.
 */
import fc from "fast-check";

const word = fc.constantFrom(
  "respond",
  "reverse_proxy",
  "root",
  "file_server",
  "header",
  "encode",
  "handle",
  "route",
  "@api",
  "/api/*",
  "*",
  "localhost:8080",
  "X-Header",
  "gzip",
  "zstd",
  "200",
  "1m30s",
  "x{host}",
  "a-b_c",
  "127.0.0.1:9000",
);
const arg = fc.oneof(
  { weight: 8, arbitrary: word },
  { weight: 1, arbitrary: fc.constantFrom('"two words"', '"{"', "`back tick`", "{path}") },
);

/** Horizontal space: one or more spaces or tabs. */
const hspace = fc.array(fc.constantFrom(" ", "\t"), { minLength: 1, maxLength: 3 }).map((a) =>
  a.join("")
);
/** Indentation: nothing or spaces/tabs. */
const indent = fc.array(fc.constantFrom(" ", "\t", "  "), { maxLength: 4 }).map((a) => a.join(""));
/** Line breaks between lines: one to three, with stray spaces. */
const breaks = fc.array(fc.constantFrom("\n", " \n", "\t\n"), { minLength: 1, maxLength: 3 }).map((
  a,
) => a.join(""));

interface Line {
  words: string[];
  comment?: string;
  children?: Line[];
}

const comment = fc.option(fc.constantFrom("# note", "#x", "# a { b }"), { nil: undefined });

const line: fc.Memo<Line> = fc.memo((depth) =>
  fc.record({
    words: fc.tuple(word, fc.array(arg, { maxLength: 3 })).map(([d, a]) => [d, ...a]),
    comment,
    children: depth > 1
      ? fc.option(fc.array(line(depth - 1), { minLength: 1, maxLength: 3 }), { nil: undefined })
      : fc.constant(undefined),
  })
);

function render(lines: Line[], ws: { h: string; i: string; b: string }): string {
  let out = "";
  for (const l of lines) {
    out += ws.i + l.words.join(ws.h);
    if (l.children) {
      out += ws.h + "{" + ws.b + render(l.children, ws) + ws.i + "}";
    }
    if (l.comment) out += ws.h + l.comment;
    out += ws.b;
  }
  return out;
}

/** A generated Gatehousefile (one or more sites, optionally a global options block). */
export const gatehousefile: fc.Arbitrary<string> = fc.record({
  global: fc.option(fc.array(line(1), { minLength: 1, maxLength: 3 }), { nil: undefined }),
  sites: fc.array(
    fc.record({
      keys: fc.array(fc.constantFrom("example.com", ":8080", "http://a.test", "*.b.test"), {
        minLength: 1,
        maxLength: 3,
      }),
      body: fc.array(line(3), { maxLength: 5 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  h: hspace,
  i: indent,
  b: breaks,
}).map(({ global, sites, h, i, b }) => {
  const ws = { h, i, b };
  let out = "";
  if (global) out += "{" + b + render(global, ws) + "}" + b;
  for (const s of sites) {
    out += s.keys.join("," + h) + h + "{" + b + render(s.body, ws) + "}" + b;
  }
  return out;
});
