/**
 * The config of `http.handlers.push`, field by field as Caddy's `Handler`, `Resource` and
 * `HeaderConfig` (`modules/caddyhttp/push/handler.go`), and its decoder. The JSON decoder, the
 * `push` directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { hasPlaceholder } from "../../replacer.ts";
import { decodeHeaderOps, type HeaderOpsConfig } from "../headers/config.ts";

/** A resource to push. */
export type PushResource = {
  /** The method of the push request: `GET` (the default) or `HEAD`. */
  method?: string;
  /** The path of the resource (or an http/https URL on the same host; placeholders allowed). */
  target?: string;
};

/** `http.handlers.push`. */
export type PushConfig = {
  /** The module name. */
  handler: "push";
  /** The resources pushed before the rest of the chain runs. */
  resources?: PushResource[];
  /** Operations on the header fields of the push requests. */
  headers?: HeaderOpsConfig;
};

/** The fields of {@linkcode PushConfig}. */
export const PUSH_FIELDS: readonly (keyof PushConfig)[] = ["handler", "resources", "headers"];

const RESOURCE_FIELDS: readonly (keyof PushResource)[] = ["method", "target"];

/**
 * Fields a promised request cannot carry (it has no body and its target is absolute; HTTP/2
 * forbids connection-specific ones).
 */
const FORBIDDEN = new Set([
  "content-length",
  "content-encoding",
  "trailer",
  "te",
  "expect",
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

function resource(o: Decoder): PushResource {
  o.fields(RESOURCE_FIELDS);
  const out: PushResource = {};
  const method = o.string("method");
  if (method !== undefined && method !== "" && method !== "GET" && method !== "HEAD") {
    o.failAt("method", `must be GET or HEAD (a pushed request has no body), got ${method}`);
  }
  if (method !== undefined) out.method = method;
  const target = o.string("target") ?? "";
  if (target === "") o.failAt("target", "required: the path of the resource to push");
  if (!hasPlaceholder(target) && !/^(\/(?!\/)|https?:\/\/)/i.test(target)) {
    o.failAt(
      "target",
      `must be an absolute path (or an http/https URL on the same host), got ${target}`,
    );
  }
  out.target = target;
  return out;
}

function headerOps(h: Decoder): HeaderOpsConfig {
  for (const op of ["add", "set"] as const) {
    for (const name of Object.keys(h.rawObject(op) ?? {})) {
      const n = name.toLowerCase();
      if (n.startsWith(":") || FORBIDDEN.has(n)) {
        h.failAt(`${op}.${name}`, "a pushed request cannot carry this field");
      }
    }
  }
  return decodeHeaderOps(h);
}

/**
 * Decodes and checks a `push` config (methods, targets, the header operations and the fields
 * a push request cannot carry).
 *
 * @example
 * ```ts
 * import { decodePush } from "./config.ts";
 * decodePush({ handler: "push", resources: [{ target: "/app.css" }] }).resources?.length; // 1
 * ```
 */
export function decodePush(raw: Raw): PushConfig {
  const d = new Decoder(raw, "http.handlers.push").fields(PUSH_FIELDS);
  const out: PushConfig = { handler: "push" };
  const resources = d.array("resources")?.map((r, i) =>
    resource(Decoder.of(r, `${d.at("resources")}[${i}]`))
  );
  if (resources) out.resources = resources;
  const headers = d.object("headers");
  if (headers) out.headers = headerOps(headers);
  return out;
}
