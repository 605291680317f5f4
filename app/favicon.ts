/**
 * The app's icon: a gatehouse arch in the sign-in pages' blue, as SVG, served at
 * `/favicon.svg` and `/favicon.ico` (browsers ask for the latter by themselves).
 *
 * @module
 */
import type { Context } from "hono";

/** The icon's SVG source. */
export const FAVICON_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" ` +
  `rx="7" fill="#1d4ed8"/><path d="M8 26V14l8-6 8 6v12h-5v-7a3 3 0 0 0-6 0v7z" fill="#fff"/>` +
  `</svg>`;

/** Route handler answering the icon (cached for a day). */
export function serveFavicon(c: Context): Response {
  return c.body(FAVICON_SVG, 200, {
    "content-type": "image/svg+xml",
    "cache-control": "public, max-age=86400",
  });
}
