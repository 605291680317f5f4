import assert from "node:assert/strict";
import {
  isNextOnNewLine,
  LexError,
  lineBreaks,
  replaceEnvVars,
  tokenize,
} from "../../../lib/server/caddyfile/lexer.ts";

const texts = (s: string) => tokenize(s, "F").map((t) => t.text);
const lines = (s: string) => tokenize(s, "F").map((t) => `${t.text}@${t.line}`);

Deno.test("lexer: words, braces and lines", () => {
  assert.deepEqual(lines("host:123 {\n\tdir1 arg\n}\n"), [
    "host:123@1",
    "{@1",
    "dir1@2",
    "arg@2",
    "}@3",
  ]);
  assert.deepEqual(texts("a\t b\r\nc"), ["a", "b", "c"]);
  assert.deepEqual(texts("\ufeffbom first"), ["bom", "first"]);
  assert.deepEqual(texts(""), []);
  assert.deepEqual(texts("   \n\n  "), []);
});

Deno.test('lexer: double quotes keep spaces; only \\" is an escape inside them', () => {
  const [t] = tokenize('"a b \\" \\n c"', "F");
  assert.equal(t.text, 'a b " \\n c');
  assert.equal(t.quote, '"');
  assert.deepEqual(lines('"multi\nline" next\nlast'), ["multi\nline@1", "next@2", "last@3"]);
  // an unterminated quote runs to the end of input and is a plain token
  const [u] = tokenize('"open', "F");
  assert.deepEqual([u.text, u.quote], ["open", ""]);
});

Deno.test("lexer: backticks keep everything literally, backslashes and double quotes included", () => {
  const [t] = tokenize('`{"a": "\\b"}`', "F");
  assert.equal(t.text, '{"a": "\\b"}');
  assert.equal(t.quote, "`");
});

Deno.test("lexer: escapes outside quotes keep the backslash, except before '<'", () => {
  // an escaped space still ends the word, and the backslash is dropped
  assert.deepEqual(texts("a\\ b \\{x\\}"), ["a", "b", "\\{x\\}"]);
  assert.deepEqual(texts('a\\"b'), ['a\\"b']);
  // \<< is not a heredoc
  assert.deepEqual(texts("\\<<EOF\nx"), ["<<EOF", "x"]);
});

Deno.test("lexer: a backslash before a newline continues the line", () => {
  const toks = tokenize("dir a \\\n  b\nnext", "F");
  assert.deepEqual(toks.map((t) => `${t.text}@${t.line}`), ["dir@1", "a@1", "b@1", "next@3"]);
  assert.equal(isNextOnNewLine(toks[1], toks[2]), false);
  assert.equal(isNextOnNewLine(toks[2], toks[3]), true);
});

Deno.test("lexer: comments start a word and run to the end of the line", () => {
  assert.deepEqual(texts("a # comment { }\nb#not-a-comment c"), ["a", "b#not-a-comment", "c"]);
  assert.deepEqual(texts('"#quoted" #c'), ["#quoted"]);
});

Deno.test("lexer: heredocs strip the closing marker's indentation", () => {
  const toks = tokenize("respond <<EOF\n\t\thello\n\n\t\t  world\n\t\tEOF 200\nnext", "F");
  assert.deepEqual(toks.map((t) => t.text), ["respond", "hello\n\n  world", "200", "next"]);
  assert.equal(toks[1].quote, "<");
  assert.equal(toks[1].heredocMarker, "EOF");
  assert.deepEqual(toks.map((t) => t.line), [1, 1, 5, 6]);
  assert.equal(lineBreaks(toks[1]), 4);
  // CRLF input
  assert.deepEqual(texts("x <<END\r\n  a\r\n  END\r\n"), ["x", "a"]);
  // "<< " with a space is an ordinary word
  assert.deepEqual(texts("<< x"), ["<<", "x"]);
  // marker right away: empty body
  assert.deepEqual(texts("<<A\nA"), [""]);
});

Deno.test("lexer: every heredoc error names the line", () => {
  const cases: [string, RegExp][] = [
    ["a\nb <<\nx\n", /^missing opening heredoc marker on line #2; must contain only/],
    ["a <<<EOF\nx\nEOF", /^too many '<' for heredoc on line #1; only use two/],
    ["\n\n\nx <<END!\nEND!", /^heredoc marker on line #4 must contain only .*got 'END!'$/],
    ["x <<EOF\n  hello\n", /^incomplete heredoc <<EOF on line #3, expected ending marker EOF$/],
    [
      "x <<EOF\n  a\n b\n  EOF",
      /^mismatched leading whitespace in heredoc <<EOF on line #3 \[ b\], expected whitespace \[ {2}\]/,
    ],
  ];
  for (const [input, re] of cases) {
    assert.throws(() => tokenize(input, "F"), (e: unknown) => {
      assert.ok(e instanceof LexError, String(e));
      assert.match(e.message, re);
      return true;
    });
  }
});

Deno.test("env: {$VAR} and {$VAR:default}, one level, malformed spans left alone", () => {
  const env = (n: string) =>
    ({ FOOBAR: "foobar", CHAINED: "$FOOBAR" } as Record<string, string>)[n];
  const cases: [string, string][] = [
    ["", ""],
    ["{$NOT_SET}", ""],
    ["foo{$NOT_SET}bar", "foobar"],
    ["foo {$FOOBAR} bar", "foo foobar bar"],
    ["{$FOOBAR}{$FOOBAR}", "foobarfoobar"],
    ["{$CHAINED}", "$FOOBAR"],
    ["{$FOO:default}", "default"],
    ["foo{$BAR:$FOOBAR}baz", "foo$FOOBARbaz"],
    ["{$FOO:a:b}", "a:b"],
    ["{$FOOBAR", "{$FOOBAR"],
    ["{$}", "{$}"],
    ["{$$}", ""],
    ["}{$", "}{$"],
    ["{env.HOME} stays", "{env.HOME} stays"],
  ];
  for (const [input, want] of cases) assert.equal(replaceEnvVars(input, env), want, input);
});
