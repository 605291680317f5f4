/** Go's `path.Join`, `path.Dir` and `path.Base`, on the examples of Go's own documentation. */
import assert from "node:assert/strict";
import { goBase, goClean, goDir, goJoin } from "../../../lib/server/net/path.ts";

Deno.test("net/path: Join, Dir, Base and Clean as Go's path package", () => {
  // path.Join examples
  assert.equal(goJoin("a", "b", "c"), "a/b/c");
  assert.equal(goJoin("a", "b/c"), "a/b/c");
  assert.equal(goJoin("a/b", "c"), "a/b/c");
  assert.equal(goJoin("a/b", "/c"), "a/b/c");
  assert.equal(goJoin("a/b", "../../../xyz"), "../xyz");
  assert.equal(goJoin("", ""), "");
  assert.equal(goJoin("a", ""), "a");
  assert.equal(goJoin("", "a"), "a");
  // path.Dir examples
  assert.equal(goDir("/a/b/c"), "/a/b");
  assert.equal(goDir("a/b/c"), "a/b");
  assert.equal(goDir("/a/"), "/a");
  assert.equal(goDir("a/"), "a");
  assert.equal(goDir("/"), "/");
  assert.equal(goDir(""), ".");
  assert.equal(goDir("Gatehousefile"), ".");
  // path.Base examples
  assert.equal(goBase("/a/b"), "b");
  assert.equal(goBase("/"), "/");
  assert.equal(goBase(""), ".");
  assert.equal(goBase("a/b/"), "b");
  assert.equal(goBase("//"), "/");
  // path.Clean examples
  for (
    const [i, o] of [
      ["a/c", "a/c"],
      ["a//c", "a/c"],
      ["a/c/.", "a/c"],
      ["a/c/b/..", "a/c"],
      ["/../a/c", "/a/c"],
      ["/../a/b/../././/c", "/a/c"],
      ["", "."],
    ]
  ) assert.equal(goClean(i), o, i);
});
