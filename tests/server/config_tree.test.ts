import assert from "node:assert/strict";
import {
  accessTree,
  canonicalJson,
  copyAlongPath,
  decodeBody,
  fnv1a32,
  indexIds,
  type Json,
  type JsonObject,
  makeEtag,
  stripMeta,
} from "../../lib/server/config_tree.ts";
import { AdminError } from "../../lib/server/errors.ts";

function root(): JsonObject {
  return { config: { apps: { a: { list: [1, 2, 3], obj: { k: "v" } } } } };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof AdminError);
    return `${e.status} ${e.code}`;
  }
  return "ok";
}

Deno.test("GET reads values; a missing leaf is null, a missing intermediate is 404", () => {
  const r = root();
  assert.deepEqual(accessTree(r, "GET", "/config/apps/a/list/1"), 2);
  assert.equal(accessTree(r, "GET", "/config/apps/a/nope"), undefined);
  assert.equal(code(() => accessTree(r, "GET", "/config/apps/nope/x")), "404 not_found");
  assert.equal(code(() => accessTree(r, "GET", "/config/apps/a/list/9")), "404 not_found");
  assert.equal(code(() => accessTree(r, "GET", "/config/apps/a/list/x")), "400 bad_request");
  assert.equal(code(() => accessTree(r, "GET", "/config/apps/a/obj/k/deeper")), "400 bad_request");
  assert.equal(code(() => accessTree(r, "GET", "/")), "400 bad_request");
});

Deno.test("POST appends to arrays, spreads with /..., creates or replaces object keys", () => {
  const r = root();
  accessTree(r, "POST", "/config/apps/a/list", 4);
  accessTree(r, "POST", "/config/apps/a/list/...", [5, 6]);
  accessTree(r, "POST", "/config/apps/a/list/0", 7); // element path: append to that array
  assert.deepEqual(accessTree(r, "GET", "/config/apps/a/list"), [1, 2, 3, 4, 5, 6, 7]);
  accessTree(r, "POST", "/config/apps/a/obj", { n: 1 });
  assert.deepEqual(accessTree(r, "GET", "/config/apps/a/obj"), { n: 1 });
  assert.equal(code(() => accessTree(r, "POST", "/config/apps/a/list/...", 1)), "400 bad_request");
  assert.equal(code(() => accessTree(r, "POST", "/config/apps/a/obj/...", [1])), "400 bad_request");
});

Deno.test("PUT inserts at an index and strictly creates keys (409 when present)", () => {
  const r = root();
  accessTree(r, "PUT", "/config/apps/a/list/0", 0);
  assert.deepEqual(accessTree(r, "GET", "/config/apps/a/list"), [0, 1, 2, 3]);
  assert.equal(code(() => accessTree(r, "PUT", "/config/apps/a/obj", {})), "409 conflict");
  accessTree(r, "PUT", "/config/apps/b/c/d", true); // intermediates are created
  assert.deepEqual(accessTree(r, "GET", "/config/apps/b"), { c: { d: true } });
  assert.equal(code(() => accessTree(r, "PUT", "/config/apps/a/list/9", 1)), "404 not_found");
});

Deno.test("PATCH strictly replaces; DELETE removes; both 404 on missing", () => {
  const r = root();
  accessTree(r, "PATCH", "/config/apps/a/list/2", 30);
  accessTree(r, "PATCH", "/config/apps/a/obj/k", "w");
  assert.equal(code(() => accessTree(r, "PATCH", "/config/apps/a/obj/nope", 1)), "404 not_found");
  accessTree(r, "DELETE", "/config/apps/a/list/0");
  accessTree(r, "DELETE", "/config/apps/a/obj/k");
  assert.deepEqual(accessTree(r, "GET", "/config/apps/a"), { list: [2, 30], obj: {} });
  assert.equal(code(() => accessTree(r, "DELETE", "/config/apps/a/obj/k")), "404 not_found");
  accessTree(r, "DELETE", "/config/");
  assert.equal(accessTree(r, "GET", "/config/"), null);
  accessTree(r, "PUT", "/config/", { apps: {} }); // strict create works again on an empty config
});

Deno.test("canonical JSON sorts keys and escapes like Go; Etag is fnv1a32 of the GET body", () => {
  assert.equal(
    canonicalJson({ b: [{ z: 1, a: 2 }], a: "<&>" }),
    '{"a":"\\u003c\\u0026\\u003e","b":[{"a":2,"z":1}]}',
  );
  assert.equal(fnv1a32(""), "811c9dc5");
  assert.equal(fnv1a32("a"), "e40c292c");
  assert.equal(makeEtag("/config/", null), `"/config/ ${fnv1a32("null\n")}"`);
});

Deno.test("@id index and stripping", () => {
  const cfg: Json = { apps: { x: { "@id": "one", list: [{ "@id": 2, v: 1 }] } } };
  assert.deepEqual([...indexIds(cfg)], [["one", "/config/apps/x"], ["2", "/config/apps/x/list/0"]]);
  assert.deepEqual(stripMeta(cfg), { apps: { x: { list: [{ v: 1 }] } } });
  assert.throws(() => indexIds({ a: { "@id": "d" }, b: { "@id": "d" } }), /duplicate/);
  assert.throws(() => indexIds({ a: { "@id": {} } }), /string or number/);
});

Deno.test("copyAlongPath isolates a change from the original tree and shares the rest", () => {
  const original = {
    config: { apps: { a: { list: [{ v: 1 }, { v: 2 }], other: { big: [1, 2, 3] } } } },
  } as JsonObject;
  const snapshot = JSON.stringify(original);
  for (
    const [method, path, value] of [
      ["PATCH", "/config/apps/a/list/0/v", 9],
      ["POST", "/config/apps/a/list", { v: 3 }],
      ["POST", "/config/apps/a/list/...", [{ v: 4 }]],
      ["PUT", "/config/apps/a/list/0", { v: 0 }],
      ["DELETE", "/config/apps/a/list/1"],
      ["PUT", "/config/apps/b/c", 1],
      ["DELETE", "/config/"],
    ] as const
  ) {
    const next = copyAlongPath(original, path);
    accessTree(next, method, path, (value ?? null) as Json);
    assert.equal(JSON.stringify(original), snapshot, `${method} ${path}`);
  }
  const next = copyAlongPath(original, "/config/apps/a/list/0/v");
  const o = original.config as { apps: { a: { other: unknown } } };
  assert.equal((next.config as typeof o).apps.a.other, o.apps.a.other);
});

Deno.test("JSON errors never quote the input (it may hold secrets)", () => {
  for (const body of ['"hunter2-secret', "hunter2-secret", '{"password": hunter2-secret}']) {
    try {
      decodeBody(body);
      assert.fail("should throw");
    } catch (e) {
      assert.ok(e instanceof AdminError);
      assert.equal(e.status, 400);
      assert.ok(!e.message.includes("hunter2"), e.message);
    }
  }
});
