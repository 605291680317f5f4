/** The OpenAPI document describes the real answers of every customer endpoint. */
import assert from "node:assert/strict";
import { check } from "./_schema.ts";
import { PDF, startMail } from "./_harness.ts";

type Doc = Record<string, unknown> & {
  paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
};

function responseSchema(doc: Doc, path: string, method: string, status: number) {
  const op = doc.paths[path]?.[method];
  assert.ok(op, `${method} ${path} is documented`);
  const res = op.responses[String(status)] as {
    content: { "application/json": { schema: Record<string, unknown> } };
  };
  assert.ok(res, `${method} ${path} documents ${status}`);
  return res.content["application/json"].schema;
}

Deno.test("openapi.json is served and matches the real responses", async () => {
  const h = await startMail();
  try {
    const s = await h.account({ sandbox: true, users: 2 });
    const r = await fetch(`${h.base}/openapi.json`);
    assert.equal(r.status, 200);
    const doc = await r.json() as Doc;
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.servers, [{ url: "/api/account-docs/v2" }]);

    const verify = (path: string, method: string, res: { status: number; body: unknown }) => {
      const problems = check(doc, responseSchema(doc, path, method, res.status), res.body);
      assert.deepEqual(problems, [], `${method} ${path} ${res.status}`);
    };
    const addr = s.addressIds[0];
    const created = await h.call("POST", "/sandbox/items", {
      key: s.apiKey,
      body: { sender_name: "Bank" },
    });
    verify("/sandbox/items", "post", created);
    const id = created.body.mail_id;
    await h.receive(addr, "Utility");
    const actionPath = (a: string) => `/addresses/{address_id}/items/actions/${a}`;
    for (const action of ["open", "open/cancel", "open", "shred", "discard"]) {
      const target = action.startsWith("open") ? id : await h.receive(addr);
      const res = await h.call("POST", `/addresses/${addr}/items/actions/${action}`, {
        key: s.apiKey,
        body: { mail_ids: [target] },
      });
      verify(actionPath(action), "post", res);
    }
    verify(
      "/sandbox/items/{mail_id}/complete",
      "post",
      await h.call("POST", `/sandbox/items/${id}/complete`, { key: s.apiKey }),
    );
    await h.ops.completeRequest((await h.ops.listRequests())[0].mail_id, {
      scan: new Blob([PDF]),
    });
    const items = await h.call("GET", "/items?sort_order=asc", { key: s.apiKey });
    assert.ok(items.body.data.some((i: { pdf_content: unknown }) => i.pdf_content !== null));
    verify("/items", "get", items);
    verify("/items", "get", await h.call("GET", "/items?page=9", { key: s.apiKey }));
    const rules = "/user-defined-rules/system-user-defined-rules";
    verify(rules, "get", await h.call("GET", rules, { key: s.apiKey }));
    const update = "/user-defined-rules/update-system-user-defined-rule";
    verify(
      update,
      "put",
      await h.call("PUT", update, {
        key: s.apiKey,
        body: { automation_name: "auto_scan", is_active: 1 },
      }),
    );
    // error answers
    verify("/items", "get", await h.call("GET", "/items", { key: "bad" }));
    verify("/items", "get", await h.call("GET", "/items?page=0", { key: s.apiKey }));
    verify(update, "put", await h.call("PUT", update, { key: s.apiKey, body: {} }));
    verify(
      actionPath("rescan"),
      "post",
      await h.call("POST", `/addresses/999/items/actions/rescan`, {
        key: s.apiKey,
        body: { mail_ids: [id] },
      }),
    );
    verify(
      actionPath("rescan"),
      "post",
      await h.call("POST", `/addresses/${addr}/items/actions/rescan`, {
        key: s.apiKey,
        body: { mail_ids: [await h.receive(addr)] },
      }),
    );
    // every documented path exists
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const real = path.replace("{address_id}", addr).replace("{mail_id}", id);
        const body = method === "get" ? undefined : {};
        const res = await h.call(method.toUpperCase(), real, { key: s.apiKey, body });
        assert.notEqual(res.body.code, 9404, `${method} ${path} exists`);
        assert.notEqual(res.body.code, 432, `${method} ${path} takes ${method}`);
      }
    }
  } finally {
    await h.close();
  }
});
