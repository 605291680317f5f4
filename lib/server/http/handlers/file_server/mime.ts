/**
 * Content types by file extension, as Go's `mime.TypeByExtension` answers them (text types
 * carry `; charset=utf-8`). Unknown extensions get no Content-Type, as in Caddy.
 *
 * @module
 */

const TYPES: Record<string, string> = {
  ".avif": "image/avif",
  ".css": "text/css; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".gif": "image/gif",
  ".htm": "text/html; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".ico": "image/vnd.microsoft.icon",
  ".jpeg": "image/jpeg",
  ".jpg": "image/jpeg",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".md": "text/markdown; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".mp3": "audio/mpeg",
  ".mp4": "video/mp4",
  ".ogg": "audio/ogg",
  ".otf": "font/otf",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".tar": "application/x-tar",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
  ".webm": "video/webm",
  ".webmanifest": "application/manifest+json",
  ".webp": "image/webp",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".xml": "text/xml; charset=utf-8",
  ".zip": "application/zip",
  ".gz": "application/gzip",
};

/**
 * The content type for a file name, or "" when unknown.
 *
 * @example
 * ```ts
 * import { contentTypeFor } from "./mime.ts";
 * contentTypeFor("index.html"); // "text/html; charset=utf-8"
 * ```
 */
export function contentTypeFor(name: string): string {
  const slash = name.lastIndexOf("/");
  const dot = name.lastIndexOf(".");
  if (dot <= slash) return "";
  return TYPES[name.slice(dot).toLowerCase()] ?? "";
}
