import assert from "node:assert/strict";
import { EnvFileError, parseEnvFile } from "../../lib/server/envfile.ts";

Deno.test("envfile: plain, export, comments, blank lines, trimming, later keys win", () => {
  assert.deepEqual(
    parseEnvFile(
      "# comment\n\nA=1\nexport B = two  \n  C=x # trailing comment\nD=a#b\nA=again\nEMPTY=\n",
    ),
    { A: "again", B: "two", C: "x", D: "a#b", EMPTY: "" },
  );
});

Deno.test("envfile: double quotes with escapes and multi-line values; single quotes are literal", () => {
  const text = [
    'Q="hello world"',
    'ESC="tab\\there\\nnew \\"quoted\\" back\\\\slash \\$HOME"',
    'MULTI="line one',
    "line two",
    'line three" # comment after',
    "LIT='no $escapes \\n here'",
    "LITML='a",
    "b'",
    "AFTER=ok",
    "CRLF=yes\r",
  ].join("\n");
  assert.deepEqual(parseEnvFile(text), {
    Q: "hello world",
    ESC: 'tab\there\nnew "quoted" back\\slash $HOME',
    MULTI: "line one\nline two\nline three",
    LIT: "no $escapes \\n here",
    LITML: "a\nb",
    AFTER: "ok",
    CRLF: "yes",
  });
});

Deno.test("envfile: errors name the line", () => {
  const cases: [string, number, RegExp][] = [
    ["A=1\nNOEQUALS\n", 2, /missing '='/],
    ["=value\n", 1, /missing variable name/],
    ["A B=1\n", 1, /invalid variable name/],
    ['A=1\nB="open\nstill open\n', 2, /unterminated/],
    ['A="x" junk\n', 1, /unexpected text/],
  ];
  for (const [text, line, re] of cases) {
    assert.throws(
      () => parseEnvFile(text),
      (e) => e instanceof EnvFileError && e.line === line && re.test(e.message),
    );
  }
});
