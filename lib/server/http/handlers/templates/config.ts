/**
 * The config of `http.handlers.templates`, field by field as Caddy's `Templates`
 * (`modules/caddyhttp/templates/templates.go`). This server cannot run Go templates: the
 * directive (`caddyfile.ts`) and the writer (`writer.ts`) make and read this type so that a
 * Caddyfile adapts as Caddy adapts it, and a config naming the module is refused when loaded.
 *
 * @module
 */

/** `http.handlers.templates`. */
export type TemplatesConfig = {
  /** The module name. */
  handler: "templates";
  /** The root the template functions read files from (`{http.vars.root}` or the working directory). */
  file_root?: string;
  /** The MIME types rendered (text/plain, text/markdown and text/html by default). */
  mime_types?: string[];
  /** The action delimiters, opening and closing (`{{` and `}}` by default). */
  delimiters?: string[];
  /** Extensions to the template functions (`http.handlers.templates.functions.*`), by name. */
  match?: Record<string, unknown>;
};
