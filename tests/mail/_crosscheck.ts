/**
 * The client/document cross-check: facts gathered from the code (what each typed-client method
 * sends, the routes the server registers, the fields of the TypeScript records, the error-code
 * union) compared with the OpenAPI document, both ways. `crossCheck` is pure, so a test can
 * also show that it fails on a document with a route, a field or a code missing.
 */
type Json = Record<string, unknown>;

/** What the code says. */
export interface CodeFacts {
  /** Client method → the request it sent (method, path below the base, JSON body keys). */
  clientCalls: Map<string, { method: string; path: string; bodyKeys: string[] }>;
  /** Routes the server registers: `METHOD /path/{}` with parameters as `{}`. */
  serverRoutes: Set<string>;
  /** TypeScript interface → property names. */
  interfaces: Map<string, string[]>;
  /** The `MailErrorCode` union. */
  codes: number[];
}

/** TypeScript records and the component schema that describes each (the same name if absent). */
export const RECORDS: Record<string, string[]> = {
  MailItem: ["MailItem"],
  StatusChange: ["StatusChange"],
  SystemRuleRow: ["SystemRuleRow"],
  ActionResult: ["ActionResult"],
  ItemPage: ["Page"],
  RulePage: ["Page"],
  AccountPage: ["Page"],
  TestItemInput: ["TestItemInput"],
  ActionBody: ["RescanOptions", "DestroyOptions", "+mail_ids", "+mail_id"],
  ItemReceipt: ["ReceiveItemInput"],
  CreatedKey: ["CreatedKey"],
  PendingRequest: ["PendingRequest"],
  DeliveryLog: ["DeliveryLog"],
  SignedDelivery: ["SignedDelivery"],
  AccountRecord: ["AccountRecord"],
  AccountDetail: ["AccountDetail"],
  UserRecord: ["UserRecord"],
  AddressRecord: ["AddressRecord"],
  ApiKeyRecord: ["ApiKeyRecord"],
  WebhookRecord: ["WebhookRecord"],
  WebhookPayload: ["WebhookPayload"],
  ItemReceivedData: ["ItemReceivedData"],
  RequestCompletedData: ["RequestCompletedData"],
  RequestFailedData: ["RequestFailedData"],
  RuleChangedData: ["RuleChangedData"],
};

const template = (path: string) => path.replace(/\{[^}]+\}/g, "{}").replace(/:[^/]+/g, "{}");

function operations(doc: Json): { method: string; path: string; op: Json }[] {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      out.push({ method: method.toUpperCase(), path, op });
    }
  }
  return out;
}

function fieldsOf(doc: Json, schema: Json): string[] {
  const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
  if (typeof schema.$ref === "string") return fieldsOf(doc, schemas[schema.$ref.split("/").pop()!]);
  return Object.keys((schema.properties ?? {}) as Json);
}

/** Everything that differs between the code and the document (empty when they agree). */
export function crossCheck(doc: Json, facts: CodeFacts): string[] {
  const problems: string[] = [];
  const ops = operations(doc);
  const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;

  // 1. client methods ⇄ operations (same operationId, method and path; body fields documented)
  const byId = new Map(ops.map((o) => [String(o.op.operationId), o]));
  for (const [name, call] of facts.clientCalls) {
    const o = byId.get(name);
    if (!o) {
      problems.push(`client method ${name} is not an operationId of the document`);
      continue;
    }
    const re = new RegExp("^" + o.path.replace(/\{[^}]+\}/g, "[^/]+") + "$");
    if (o.method !== call.method || !re.test(call.path)) {
      problems.push(
        `${name}: client sends ${call.method} ${call.path}, document has ${o.method} ${o.path}`,
      );
    }
    const content = (o.op.requestBody as { content?: Record<string, Json> } | undefined)?.content;
    const media = content?.["application/json"] ?? content?.["multipart/form-data"];
    const documented = media ? fieldsOf(doc, media.schema as Json) : [];
    for (const key of call.bodyKeys) {
      if (!documented.includes(key)) {
        problems.push(`${name}: client sends field ${key}, not documented`);
      }
    }
  }
  for (const o of ops) {
    const id = String(o.op.operationId);
    if (!facts.clientCalls.has(id) && o.op["x-gatehouse-client"] !== false) {
      problems.push(`operation ${id} (${o.method} ${o.path}) has no client method`);
    }
  }

  // 2. server routes ⇄ document paths
  const documented = new Set(ops.map((o) => `${o.method} ${template(o.path)}`));
  for (const r of facts.serverRoutes) {
    if (!documented.has(r)) problems.push(`server route ${r} is not in the document`);
  }
  for (const d of documented) {
    if (!facts.serverRoutes.has(d)) problems.push(`documented ${d} is not a server route`);
  }

  // 3. record fields ⇄ component schemas
  for (const [schema, sources] of Object.entries(RECORDS)) {
    if (!schemas[schema]) {
      problems.push(`schema ${schema} is missing`);
      continue;
    }
    const ts = new Set<string>();
    for (const s of sources) {
      if (s.startsWith("+")) ts.add(s.slice(1));
      else if (!facts.interfaces.has(s)) problems.push(`interface ${s} is missing`);
      else for (const f of facts.interfaces.get(s)!) ts.add(f);
    }
    const props = new Set(Object.keys((schemas[schema].properties ?? {}) as Json));
    for (const f of ts) if (!props.has(f)) problems.push(`${schema}: field ${f} is not documented`);
    for (const f of props) {
      if (!ts.has(f)) problems.push(`${schema}: field ${f} is not in ${sources}`);
    }
  }

  // 4. error codes: the union ⇄ the Error schema ⇄ the codes the operations document
  const union = new Set(facts.codes);
  const errorEnum = new Set(((schemas.Error.properties as Json).code as { enum: number[] }).enum);
  const answered = new Set<number>();
  for (const o of ops) {
    for (const r of Object.values(o.op.responses as Record<string, Json>)) {
      const media = (r.content as Record<string, Json> | undefined)?.["application/json"];
      const enumOf = ((media?.schema as Json | undefined)?.properties as Json | undefined)?.code;
      for (const c of (enumOf as { enum?: number[] } | undefined)?.enum ?? []) answered.add(c);
    }
  }
  for (const [what, set] of [["Error schema", errorEnum], ["operations", answered]] as const) {
    for (const c of union) if (!set.has(c)) problems.push(`code ${c} is not in the ${what}`);
    for (const c of set) {
      if (!union.has(c)) problems.push(`code ${c} of the ${what} is not a MailErrorCode`);
    }
  }
  return problems;
}
