/**
 * Generated stand-ins for real paper: an envelope image (SVG) and a one-page scan (PDF), used
 * by sandbox accounts and the standalone demo.
 *
 * @module
 */

const encoder = new TextEncoder();

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** An SVG envelope showing the sender's name. */
export function envelopeSvg(sender: string): Uint8Array {
  return encoder.encode(
    `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="240" viewBox="0 0 480 240">` +
      `<rect width="480" height="240" fill="#f4ecd8" stroke="#8a7a5a" stroke-width="4"/>` +
      `<rect x="390" y="20" width="70" height="80" fill="#c44" />` +
      `<text x="30" y="50" font-family="sans-serif" font-size="18">${escapeXml(sender)}</text>` +
      `<text x="160" y="160" font-family="sans-serif" font-size="16">Sandbox item</text></svg>`,
  );
}

function pdfEscape(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, "?").replace(/[\\()]/g, (ch) => "\\" + ch);
}

/** A valid one-page PDF with a line of text. */
export function samplePdf(text: string): Uint8Array {
  const stream = `BT /F1 14 Tf 72 720 Td (${pdfEscape(text)}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R " +
    "/Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return encoder.encode(out);
}
