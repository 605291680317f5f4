/**
 * Reads a QR code as a phone's camera would: a screenshot of the element as the browser drew
 * it, decoded by `jsqr` (an independent QR reader, not the library that drew it).
 */
import jsqr from "jsqr";
import type { Locator } from "playwright-core";
import { decodePng } from "./_png.ts";

// A CommonJS module: Deno types its default import as the module, whose `default` is the
// reader (at run time the reader itself, which carries itself as `default` too).
const jsQR = jsqr.default;

/** The text of the QR code that `element` shows; throws when none can be read. */
export async function readQr(element: Locator): Promise<string> {
  const p = decodePng(await element.screenshot());
  const rgba = new Uint8ClampedArray(p.width * p.height * 4);
  for (let i = 0; i < p.width * p.height; i++) {
    for (let c = 0; c < 3; c++) rgba[i * 4 + c] = p.data[i * p.channels + c];
    rgba[i * 4 + 3] = 255;
  }
  const code = jsQR(rgba, p.width, p.height, { inversionAttempts: "dontInvert" });
  if (!code) throw new Error(`no QR code could be read in ${p.width}x${p.height} pixels`);
  return code.data;
}
