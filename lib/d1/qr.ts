/**
 * QR codes of `otpauth://` URIs for TOTP enrolment, drawn by `lean-qr` (no dependencies, pure
 * JavaScript: the same on Deno, Node and Workers) as an SVG document a page can inline.
 *
 * `lean-qr` is loaded when this module is, but a missing one (the npm mirror's packages are
 * optional peers) fails only `totpQrSvg`, with an error naming the package: the D1 flows run
 * without it.
 *
 * @module
 */
type LeanQr = [typeof import("lean-qr"), typeof import("lean-qr/extras/svg")];
const leanQr: LeanQr | Error = await Promise.all([
  import("lean-qr"),
  import("lean-qr/extras/svg"),
]).catch((e: unknown) => e instanceof Error ? e : new Error(String(e)));

/** Options of {@linkcode totpQrSvg}. */
export interface QrSvgOptions {
  /** Accessible name of the image (`<title>` and `aria-label`); default "QR code". */
  title?: string;
  /** Width and height in CSS pixels; default 200. */
  size?: number;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An SVG QR code of `text` (at most 1,024 characters; an `otpauth://` URI is about 100),
 * error correction level M, a quiet zone of 4 modules, black on white. Throws `RangeError`
 * for longer text or a size outside 64–1,024.
 *
 * @example
 * ```ts
 * import { totpQrSvg } from "@gatehouse/gatehouse/d1";
 * const svg = totpQrSvg("otpauth://totp/Example:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example");
 * console.log(svg.startsWith("<svg")); // true
 * ```
 */
export function totpQrSvg(text: string, options: QrSvgOptions = {}): string {
  if (typeof text !== "string" || text.length === 0 || text.length > 1024) {
    throw new RangeError("QR text must be 1 to 1024 characters");
  }
  const size = options.size ?? 200;
  if (!Number.isInteger(size) || size < 64 || size > 1024) {
    throw new RangeError("size must be 64 to 1024 pixels");
  }
  const title = escape(options.title ?? "QR code");
  if (leanQr instanceof Error) throw leanQr;
  const [{ correction, generate }, { toSvgSource }] = leanQr;
  const code = generate(text, { minCorrectionLevel: correction.M });
  const svg = toSvgSource(code, { on: "#000", off: "#fff", pad: 4, xmlDeclaration: false });
  return svg
    .replace(/ width="\d+" height="\d+"/, ` width="${size}" height="${size}"`)
    .replace(/^<svg /, `<svg role="img" aria-label="${title}" `)
    .replace(/^(<svg[^>]*>)/, `$1<title>${title}</title>`);
}
