/**
 * The config of `http.handlers.templates`, field by field as Caddy's `Templates`
 * (`modules/caddyhttp/templates/templates.go`), and its decoder. The JSON decoder, the
 * directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/** `http.handlers.templates`. */
export type TemplatesConfig = {
  /** The module name. */
  handler: "templates";
  /**
   * The root the template functions read files from (placeholders allowed);
   * `{http.vars.root}` by default, the working directory when that is not set.
   */
  file_root?: string;
  /** The MIME types rendered (text/plain, text/markdown and text/html by default). */
  mime_types?: string[];
  /** The action delimiters, opening and closing (`{{` and `}}` by default). */
  delimiters?: string[];
  /**
   * Extensions to the template functions (`http.handlers.templates.functions.*`), by name.
   * No such module exists here: a config with extensions is refused.
   */
  match?: Record<string, unknown>;
};

/** The fields of {@linkcode TemplatesConfig}. */
export const TEMPLATES_FIELDS: readonly (keyof TemplatesConfig)[] = [
  "handler",
  "file_root",
  "mime_types",
  "delimiters",
  "match",
];

/** The MIME types rendered when the config names none (Caddy's `defaultMIMETypes`). */
export const DEFAULT_MIME_TYPES: readonly string[] = ["text/html", "text/plain", "text/markdown"];

/**
 * Decodes and checks a `templates` config: known fields, two delimiters, no extensions.
 *
 * @example
 * ```ts
 * import { decodeTemplates } from "./config.ts";
 * decodeTemplates({ handler: "templates", delimiters: ["[[", "]]"] }).delimiters; // ["[[", "]]"]
 * ```
 */
export function decodeTemplates(raw: Raw): TemplatesConfig {
  const d = new Decoder(raw, "http.handlers.templates").fields(TEMPLATES_FIELDS);
  const out: TemplatesConfig = { handler: "templates" };
  const root = d.string("file_root");
  if (root !== undefined) out.file_root = root;
  const mime = d.strings("mime_types");
  if (mime !== undefined) out.mime_types = mime;
  const delims = d.strings("delimiters");
  if (delims !== undefined) {
    if (delims.length !== 0 && delims.length !== 2) {
      d.failAt(
        "delimiters",
        "delimiters must consist of exactly two elements: opening and closing",
      );
    }
    if (delims.length === 2 && (delims[0] === "" || delims[1] === "")) {
      d.failAt("delimiters", "a delimiter cannot be empty");
    }
    out.delimiters = delims;
  }
  const match = d.rawObject("match");
  if (match !== undefined && Object.keys(match).length > 0) {
    d.failAt(
      "match",
      `loading template extensions: module not registered: http.handlers.templates.functions.${
        Object.keys(match)[0]
      } (template function extensions are not available here)`,
    );
  }
  return out;
}
