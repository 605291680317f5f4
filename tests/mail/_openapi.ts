/**
 * Checks real answers against the OpenAPI document with Ajv (JSON Schema 2020-12, the dialect
 * of OpenAPI 3.1): the operation is found by method and path template, its status and content
 * type must be documented, and a JSON body must validate against the documented schema.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { openApiDocument } from "../../lib/mail/openapi.ts";

type Json = Record<string, unknown>;
const SCHEMA_BASE = "https://gatehouse.test/schemas/";

/** The document with `$ref`s rewritten to absolute ids, so Ajv resolves them. */
function absolute<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value).replaceAll('"#/components/schemas/', `"${SCHEMA_BASE}`),
  );
}

/** An Ajv holding every component schema of `doc`. */
export function schemaValidator(doc: Json): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("uri", { validate: (s: string) => URL.canParse(s) });
  ajv.addFormat("date-time", { validate: (s: string) => !Number.isNaN(Date.parse(s)) });
  const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    ajv.addSchema({ ...absolute(schema), $id: SCHEMA_BASE + name });
  }
  return ajv;
}

/** Problems of `value` against `schema` (a schema of `doc`, refs as in the document). */
export function validate(ajv: Ajv2020, schema: Json, value: unknown): string[] {
  const fn = ajv.compile(absolute(schema));
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => `${e.instancePath || "$"} ${e.message}`);
}

/** The Allow header of a path with these documented methods: HEAD wherever GET is, sorted. */
function allowOf(methods: string[]): string {
  const all = new Set(methods);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort().join(", ");
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  op: Json;
}

/** What the checker saw: operations answered, and problems. */
export class ResponseChecker {
  readonly doc: Json;
  readonly ajv: Ajv2020;
  readonly problems: string[] = [];
  /** `METHOD template status` of every checked answer. */
  readonly seen = new Set<string>();
  #routes: Route[] = [];
  #base: string;

  constructor(basePath = "/api/account-docs/v2") {
    this.#base = basePath;
    this.doc = openApiDocument(basePath);
    this.ajv = schemaValidator(this.doc);
    const paths = this.doc.paths as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      const pattern = new RegExp(
        "^" + template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+") + "$",
      );
      for (const [method, op] of Object.entries(item)) {
        this.#routes.push({ method: method.toUpperCase(), template, pattern, op });
      }
    }
  }

  /** Checks one answer; returns its problems (also kept in `problems`). */
  async check(
    request: { method: string; url: string },
    response: Response,
    headers: Headers = response.headers,
  ): Promise<string[]> {
    // a malformed Host makes no URL: such a request is answered 400 code 19 (checked below)
    const url = URL.canParse(request.url) ? new URL(request.url) : new URL("http://bad.host/");
    const path = url.pathname.slice(this.#base.length) || "/";
    const method = request.method === "HEAD" ? "GET" : request.method;
    const type = (headers.get("content-type") ?? "").split(";")[0].trim();
    // a body the server sent gzip-compressed (the OpenAPI document, the renderer) is read decoded
    const text = headers.get("content-encoding") === "gzip" && response.body
      ? await new Response(response.body.pipeThrough(new DecompressionStream("gzip"))).text()
      : await response.text();
    const body = type === "application/json" && text !== "" ? JSON.parse(text) : text;
    const found = this.#routes.filter((r) => r.pattern.test(path));
    const route = found.find((r) => r.method === method);
    const code = typeof body === "object" && body !== null ? (body as Json).code : undefined;
    const where = `${request.method} ${path} → ${response.status}`;
    const problems: string[] = [];
    const errorSchema = { $ref: "#/components/schemas/Error" };
    if (!route) {
      // A path the document does not have answers "no such endpoint"; a documented path asked
      // with a method it does not have answers "wrong method" with the documented methods in
      // Allow. (Any path may answer 413 or a malformed Host's 400, code 19.)
      const allow = found.length > 0 ? allowOf(found.map((r) => r.method)) : null;
      const ok = (code === 9404 && response.status === 404 && found.length === 0) ||
        (code === 432 && response.status === 405 && found.length > 0) ||
        (code === 19 && response.status === 413) || (code === 19 && response.status === 400);
      if (!ok) problems.push(`${where}: not in the document (code ${code})`);
      else problems.push(...validate(this.ajv, errorSchema, body).map((p) => `${where}: ${p}`));
      if (ok && code === 432 && headers.get("allow") !== allow) {
        problems.push(`${where}: Allow is ${headers.get("allow")}, the document has ${allow}`);
      }
    } else if (response.status === 400 && code === 19) {
      // a malformed Host header, on any route (documented in info's error table)
      problems.push(...validate(this.ajv, errorSchema, body).map((p) => `${where}: ${p}`));
    } else {
      this.seen.add(`${route.method} ${route.template} ${response.status}`);
      const responses = route.op.responses as Record<string, Json>;
      const doc = responses[String(response.status)] ??
        responses[`${String(response.status)[0]}XX`] ?? responses.default;
      if (!doc) problems.push(`${where}: status not documented for ${route.template}`);
      else {
        const content = doc.content as Record<string, Json> | undefined;
        const media = content?.[type];
        if (!media) problems.push(`${where}: content type ${type} not documented`);
        else if (type === "application/json") {
          problems.push(
            ...validate(this.ajv, media.schema as Json, body).map((p) => `${where}: ${p}`),
          );
        }
      }
    }
    this.problems.push(...problems);
    return problems;
  }

  /** Whether `url` is under this API's base path (the answers `check` is for). */
  covers(url: string): boolean {
    if (!URL.canParse(url)) return false;
    const path = new URL(url).pathname;
    return path === this.#base || path.startsWith(`${this.#base}/`);
  }

  /**
   * A `fetch` that checks every answer under the base path (for a client's `fetch` option, or
   * to call an app that mounts the API). Other URLs pass unchecked.
   */
  fetch(inner: typeof fetch = fetch): typeof fetch {
    return async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      const response = await inner(input, init);
      if (this.covers(url)) await this.check({ method, url }, response.clone(), response.headers);
      return response;
    };
  }

  /** Checks an answer read off a raw socket (status, headers and body text as they came). */
  async checkRaw(
    request: { method: string; url: string },
    raw: { status: number; headers: Headers; body: string },
  ): Promise<string[]> {
    const empty = raw.status === 204 || raw.status === 304 || request.method === "HEAD";
    const response = new Response(empty ? null : raw.body, {
      status: raw.status,
      headers: raw.headers,
    });
    return await this.check(request, response, raw.headers);
  }

  /** Throws when an answer did not match the document. */
  assertClean(): void {
    if (this.problems.length) {
      throw new Error(
        `answers that do not match the OpenAPI document:\n${this.problems.join("\n")}`,
      );
    }
  }

  /** A `fetch` handler that checks every answer of `handler` under the base path. */
  wrap(
    handler: (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response>,
  ): (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response> {
    return async (request, info) => {
      const seen = { method: request.method, url: request.url };
      const response = await handler(request, info);
      // (a clone of Hono's answer may lose its headers: they are read from the original)
      if (this.covers(seen.url)) await this.check(seen, response.clone(), response.headers);
      return response;
    };
  }
}
