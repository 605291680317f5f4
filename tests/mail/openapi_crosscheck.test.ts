/**
 * The typed clients, the server's routes, the TypeScript records and the error-code union
 * against the OpenAPI document, both ways: a route, a field or a code in one and not the other
 * fails. Facts come from the real code: each client method is called against a real server
 * (its request recorded on the way), the routes are the server's router table, the records'
 * fields and the code union are read by `deno doc --json`.
 */
import assert from "node:assert/strict";
import { MailClient, MailroomClient } from "../../mail.ts";
import { openApiDocument } from "../../lib/mail/openapi.ts";
import { mailInternals } from "../../lib/mail/server.ts";
import { type CodeFacts, crossCheck } from "./_crosscheck.ts";
import { PDF, PNG, startMail } from "./_harness.ts";

type Json = Record<string, unknown>;
type Call = { method: string; path: string; bodyKeys: string[] };
const BASE = "/api/account-docs/v2";

/** Fields of every exported interface (with those of the interfaces it extends). */
async function interfaces(): Promise<Map<string, string[]>> {
  const files = [
    "types.ts",
    "client.ts",
    "mailroom_client.ts",
    "mailroom_lists.ts",
    "webhooks.ts",
    "requests.ts",
    "accounts.ts",
    "event_types.ts",
  ].map((f) => `lib/mail/${f}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...files],
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
  }).output();
  assert.equal(out.code, 0);
  const doc = JSON.parse(new TextDecoder().decode(out.stdout));
  const raw = new Map<string, { props: string[]; extends: string[] }>();
  for (const mod of Object.values(doc.nodes) as { symbols: Json[] }[]) {
    for (const s of mod.symbols) {
      for (const d of s.declarations as { kind: string; def: Json }[]) {
        if (d.kind !== "interface") continue;
        raw.set(String(s.name), {
          props: (d.def.properties as { name: string }[]).map((p) => p.name),
          extends: ((d.def.extends ?? []) as { repr: string }[]).map((e) => e.repr),
        });
      }
    }
  }
  const resolve = (name: string): string[] => {
    const r = raw.get(name);
    return r ? [...r.extends.flatMap(resolve), ...r.props] : [];
  };
  return new Map([...raw.keys()].map((name) => [name, resolve(name)]));
}

async function codeUnion(): Promise<number[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "lib/mail/errors.ts"],
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
  }).output();
  const doc = JSON.parse(new TextDecoder().decode(out.stdout));
  const mod = Object.values(doc.nodes)[0] as { symbols: Json[] };
  const alias = mod.symbols.find((s) => s.name === "MailErrorCode")!;
  const decl = (alias.declarations as { def: { tsType: { value: Json[] } } }[])[0];
  return decl.def.tsType.value.map((v) => Number((v.value as Json).number));
}

/** Calls every client method against a real server, recording the request each one sends. */
async function clientCalls(): Promise<{ calls: Map<string, Call>; helpers: Map<string, Call[]> }> {
  const h = await startMail();
  const rx = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(null, { status: 204 }),
  );
  let log: Call[] = [];
  const recorder: typeof fetch = (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const body = init?.body;
    const bodyKeys = body instanceof FormData
      ? [...new Set(body.keys())]
      : typeof body === "string" && body !== ""
      ? Object.keys(JSON.parse(body))
      : [];
    log.push({ method: init?.method ?? "GET", path: url.pathname.slice(BASE.length), bodyKeys });
    return fetch(input, init);
  };
  try {
    const s = await h.account({ sandbox: true });
    const addr = s.addressIds[0];
    const c = new MailClient({ baseUrl: h.base, apiKey: s.apiKey, fetch: recorder, retries: 0 });
    const ops = new MailroomClient({
      baseUrl: h.base,
      operatorToken: "test-operator-token-0123456789",
      fetch: recorder,
    });
    const id = (await s.client.createTestItem()).mail_id;
    const item = (await s.client.listItems()).data[0];
    const png = new Blob([PNG], { type: "image/png" });
    const calls: Record<string, () => Promise<unknown>> = {
      listItems: () => c.listItems({ page: 1, sort_order: "asc" }),
      listSystemRules: () => c.listSystemRules({ page: 1, sort_order: "asc" }),
      updateSystemRule: () => c.updateSystemRule("auto_discard", 0),
      open: () => c.open(addr, id),
      cancelOpen: () => c.cancelOpen(addr, id),
      rescan: () => c.rescan(addr, id, { rescan_type: 1, comment: "c" }),
      cancelRescan: () => c.cancelRescan(addr, id),
      shred: () => c.shred(addr, id, { delete_digital_copy: true }),
      cancelShred: () => c.cancelShred(addr, id),
      discard: () => c.discard(addr, id, { delete_digital_copy: false }),
      cancelDiscard: () => c.cancelDiscard(addr, id),
      createTestItem: () =>
        c.createTestItem({ address_id: addr, sender_name: "S", item_type: "letter" }),
      completeTestRequest: () => c.completeTestRequest(id),
      downloadFile: () => c.downloadFile(item.cover_image!),
      openApi: () => c.openApi(),
      listAccounts: () => ops.listAccounts({ page: 1, sort_order: "asc" }),
      createAccount: () => ops.createAccount({ name: "N", api_access: true, sandbox: false }),
      getAccount: () => ops.getAccount(s.accountId),
      updateAccount: () => ops.updateAccount(s.accountId, { status: "open", api_access: true }),
      createUser: () => ops.createUser(s.accountId, "U"),
      createAddress: () => ops.createAddress(s.accountId, s.userIds[0], "L"),
      createApiKey: () => ops.createApiKey(s.accountId, "l"),
      findApiKeys: () => ops.findApiKeys(s.apiKey.slice(0, 12)),
      revokeApiKey: () => ops.revokeApiKey("999999"),
      registerWebhook: () =>
        ops.registerWebhook(s.accountId, `http://127.0.0.1:${rx.addr.port}/`, ["rule.changed"]),
      listDeliveries: () => ops.listDeliveries("1"),
      deactivateWebhook: () => ops.deactivateWebhook("1"),
      getDelivery: () => ops.getDelivery("999999"),
      redeliver: () => ops.redeliver("999999"),
      listAccountItems: () => ops.listAccountItems(s.accountId, { page: 1, sort_order: "asc" }),
      listAccountRules: () => ops.listAccountRules(s.accountId, { page: 1, sort_order: "asc" }),
      setAccountRule: () => ops.setAccountRule(s.accountId, "auto_scan", false),
      receiveItem: () =>
        ops.receiveItem({
          address_id: addr,
          sender_name: "S",
          item_type: "letter",
          received_at: new Date(),
          envelope: png,
        }),
      getItem: () => ops.getItem(id),
      listRequests: () => ops.listRequests(10),
      completeRequest: () =>
        ops.completeRequest(id, {
          scan: new Blob([PDF], { type: "application/pdf" }),
          page_count: 1,
        }),
      failRequest: () => ops.failRequest(id, "r"),
    };
    const helpers: Record<string, () => Promise<unknown>> = {
      items: async () => {
        for await (const _ of c.items()) { /* all pages */ }
      },
      systemRules: async () => {
        for await (const _ of c.systemRules()) { /* all pages */ }
      },
      request: () => c.request("GET", "/items"),
    };
    const methods = [
      ...Object.getOwnPropertyNames(MailClient.prototype),
      ...Object.getOwnPropertyNames(MailroomClient.prototype),
    ].filter((m) => m !== "constructor");
    const missing = methods.filter((m) => !(m in calls) && !(m in helpers));
    assert.deepEqual(missing, [], "every client method is exercised here");
    const out = new Map<string, Call>();
    for (const [name, call] of Object.entries(calls)) {
      log = [];
      await call().catch(() => {}); // an error answer is fine: the request is what counts
      assert.equal(log.length, 1, `${name} sends one request`);
      out.set(name, log[0]);
    }
    const helperCalls = new Map<string, Call[]>();
    for (const [name, call] of Object.entries(helpers)) {
      log = [];
      await call();
      helperCalls.set(name, log);
    }
    await h.server.idle();
    return { calls: out, helpers: helperCalls };
  } finally {
    await rx.shutdown();
    await h.close();
  }
}

async function gather(): Promise<CodeFacts & { helpers: Map<string, Call[]> }> {
  const { calls, helpers } = await clientCalls();
  const h = await startMail();
  try {
    const routes = new Set<string>();
    for (const r of mailInternals(h.server).router.routes) {
      if (r.method === "ALL" || r.handler.name === "wrongMethod") continue;
      const path = r.path.slice(BASE.length) || "/";
      routes.add(`${r.method} ${path.replace(/:[^/]+/g, "{}")}`);
    }
    return {
      clientCalls: calls,
      serverRoutes: routes,
      interfaces: await interfaces(),
      codes: await codeUnion(),
      helpers,
    };
  } finally {
    await h.close();
  }
}

Deno.test("cross-check: clients, server routes, records and error codes agree with the document", async (t) => {
  const facts = await gather();
  const doc = openApiDocument(BASE);
  await t.step("no difference", () => {
    assert.deepEqual(crossCheck(doc, facts), []);
  });
  await t.step("the iterators page through their list operation only", () => {
    assert.ok(facts.helpers.get("items")!.every((c) => c.method === "GET" && c.path === "/items"));
    assert.ok(
      facts.helpers.get("systemRules")!.every((c) =>
        c.path === "/user-defined-rules/system-user-defined-rules"
      ),
    );
  });
  await t.step("a route, a field or a code in one and not the other is found", () => {
    const mutate = (change: (d: Json) => void) => {
      const copy = structuredClone(doc) as Json;
      change(copy);
      return crossCheck(copy, facts);
    };
    const paths = (d: Json) => d.paths as Record<string, Record<string, Json>>;
    const schemas = (d: Json) => (d.components as { schemas: Record<string, Json> }).schemas;
    // a route the server and the client have, gone from the document
    const noRoute = mutate((d) => delete paths(d)["/mailroom/api-keys"]);
    assert.ok(noRoute.includes("client method findApiKeys is not an operationId of the document"));
    assert.ok(noRoute.includes("server route GET /mailroom/api-keys is not in the document"));
    // a documented route nobody has
    const extra = mutate((d) => {
      paths(d)["/items/{mail_id}"] = { get: { ...paths(d)["/items"].get, operationId: "getOne" } };
    });
    assert.ok(extra.includes("documented GET /items/{} is not a server route"));
    assert.ok(extra.some((p) => p.startsWith("operation getOne")));
    // a field in the code and not the document, and one the other way
    const noField = mutate((d) => {
      const props = schemas(d).MailItem.properties as Json;
      delete props.page_count;
      props.color = { type: "string" };
    });
    assert.ok(noField.includes("MailItem: field page_count is not documented"));
    assert.ok(noField.includes("MailItem: field color is not in MailItem"));
    // a client body field that is not documented
    const noBody = mutate((d) => delete (schemas(d).ActionBody.properties as Json).comment);
    assert.ok(noBody.includes("rescan: client sends field comment, not documented"));
    // an error code missing from the operations and from the Error schema
    const noCode = mutate((d) => {
      const err = schemas(d).Error.properties as { code: { enum: number[] } };
      err.code.enum = err.code.enum.filter((c) => c !== 469);
      for (const item of Object.values(paths(d))) {
        for (const op of Object.values(item)) {
          for (const r of Object.values(op.responses as Record<string, Json>)) {
            const s = ((r.content as Record<string, Json> | undefined)?.["application/json"]
              ?.schema ?? {}) as { properties?: { code?: { enum?: number[] } } };
            const e = s.properties?.code;
            if (e?.enum) e.enum = e.enum.filter((c) => c !== 469);
          }
        }
      }
    });
    assert.ok(noCode.includes("code 469 is not in the Error schema"));
    assert.ok(noCode.includes("code 469 is not in the operations"));
  });
});
