import assert from "node:assert/strict";
import { didYouMean, Dispenser } from "../../../lib/server/caddyfile/dispenser.ts";
import { tokenize } from "../../../lib/server/caddyfile/lexer.ts";
import { editDistance, suggest } from "../../../lib/server/caddyfile/suggest.ts";

const disp = (s: string) => new Dispenser(tokenize(s, "Testfile"));

Deno.test("dispenser: next, nextArg stops at line ends and at an unquoted '{'", () => {
  const d = disp('dir a "{" {\n\tsub x\n}\nnext');
  assert.ok(d.next());
  assert.equal(d.val(), "dir");
  assert.deepEqual(d.remainingArgs(), ["a", "{"]);
  assert.equal(d.nextArg(), false);
  assert.ok(d.nextBlock(0));
  assert.equal(d.val(), "sub");
  assert.equal(d.nesting(), 1);
  assert.deepEqual(d.remainingArgs(), ["x"]);
  assert.equal(d.nextBlock(0), false); // consumes the closing brace
  assert.ok(d.next());
  assert.equal(d.val(), "next");
  assert.equal(d.next(), false);
});

Deno.test("dispenser: nested blocks, nextSegment and newFromNextSegment", () => {
  const d = disp("a {\n\tb 1 {\n\t\tc\n\t}\n\td\n}");
  d.next();
  const seen: string[] = [];
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() === "b") {
      const seg = d.nextSegment().map((t) => t.text);
      assert.deepEqual(seg, ["b", "1", "{", "c", "}"]);
    }
    seen.push(`${d.val()}@${d.nesting()}`);
  }
  assert.deepEqual(seen, ["}@1", "d@1"]);
  const e = disp("x y {\n\tz\n}\nafter");
  e.next();
  const sub = e.newFromNextSegment();
  assert.deepEqual(sub.tokens.map((t) => t.text), ["x", "y", "{", "z", "}"]);
  assert.equal(e.val(), "}"); // the closing brace is left for the caller's loop
  assert.ok(e.next());
  assert.equal(e.val(), "after");
});

Deno.test("dispenser: empty block, args, allArgs, countRemainingArgs, prev, reset, delete", () => {
  const d = disp("a {\n}\nb 1 2");
  d.next();
  assert.equal(d.nextBlock(0), false); // "{" then "}": consumed, no iteration
  d.next();
  assert.equal(d.val(), "b");
  assert.equal(d.countRemainingArgs(), 2);
  assert.equal(d.val(), "b");
  assert.equal(d.allArgs(1), undefined);
  d.prev();
  assert.deepEqual(d.allArgs(2), ["1", "2"]);
  d.reset();
  assert.equal(d.cursor, -1);
  d.next();
  assert.deepEqual(d.delete().map((t) => t.text), ["{", "}", "b", "1", "2"]);
  assert.equal(d.cursor, -1);
});

Deno.test("dispenser: scalarVal and valRaw", () => {
  const d = disp('42 -1.5 true "42" `raw` word');
  const got: unknown[] = [];
  while (d.next()) got.push([d.scalarVal(), d.valRaw()]);
  assert.deepEqual(got, [
    [42, "42"],
    [-1.5, "-1.5"],
    [true, "true"],
    ["42", '"42"'],
    ["raw", "`raw`"],
    ["word", "word"],
  ]);
});

Deno.test("dispenser: errors carry file, line and the import chain", () => {
  const d = disp("dir\n{");
  d.next();
  assert.equal(
    d.argErr().message,
    "wrong argument count or unexpected line ending after 'dir', at Testfile:1",
  );
  d.next();
  assert.equal(d.argErr().message, "unexpected token '{', expecting argument, at Testfile:2");
  assert.equal(d.eofErr().message, "unexpected EOF, at Testfile:2");
  assert.equal(
    d.syntaxErr("}").message,
    "syntax error: unexpected token '{', expecting '}', at Testfile:2 import chain: ['']",
  );
  const t = tokenize("x", "a.conf")[0];
  t.imports = ["Gatehousefile:3 (import)", "b:1 (import s)"];
  const e = new Dispenser([t]);
  e.next();
  const err = e.err("bad");
  assert.equal(
    err.message,
    "bad, at a.conf:1 import chain ['Gatehousefile:3 (import)','b:1 (import s)']",
  );
  assert.deepEqual([err.file, err.line], ["a.conf", 1]);
});

Deno.test("did you mean: near misses only", () => {
  assert.equal(editDistance("abc", "acb"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(suggest("rever_proxy", ["respond", "reverse_proxy", "redir"]), "reverse_proxy");
  assert.equal(suggest("lb_polcy", ["lb_policy", "lb_retries"]), "lb_policy");
  assert.equal(suggest("example.com", ["respond", "reverse_proxy"]), undefined);
  assert.equal(suggest("x", ["y"]), "y");
  assert.equal(didYouMean("hedaer", ["header"]), " (did you mean 'header'?)");
  assert.equal(didYouMean("zzzzzz", ["header"]), "");
  const d = disp("lb_polcy");
  d.next();
  assert.equal(
    d.unknownSubdirective(["lb_policy"]).message,
    "unrecognized subdirective lb_polcy (did you mean 'lb_policy'?), at Testfile:1",
  );
});
