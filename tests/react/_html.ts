/**
 * A canonical form of server-rendered markup, for comparing what React and Preact render.
 * Two serializations get the same canonical form exactly when an HTML parser builds the same
 * elements, attributes and text from them: attribute order and name case, `required` against
 * `required=""`, `<input/>` against `<input>`, entity spelling (`&#x27;` or `'`), a trailing
 * `;` or spaces in a `style` value, and React's empty `<!-- -->` text separators are erased;
 * anything else (a tag, an attribute, a value, a text) is kept and compared.
 */

const TOKEN =
  /<!--([\s\S]*?)-->|<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>\/=]+(?:\s*=\s*"[^"]*")?)*)\s*(\/?)>|([^<]+)/g;
const ATTR = /([^\s"'>\/=]+)(?:\s*=\s*"([^"]*)")?/g;

/** Decodes the character references the renderers write. */
export function decode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos|nbsp);/g, (_, e: string) => {
    if (e[0] === "#") {
      return String.fromCodePoint(e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1)));
    }
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }[e]!;
  });
}

function styleValue(s: string): string {
  return s.split(";").map((d) => d.trim()).filter((d) => d !== "").map((d) => {
    const i = d.indexOf(":");
    return `${d.slice(0, i).trim()}:${d.slice(i + 1).trim()}`;
  }).join(";");
}

/** The canonical lines of `html`: one per tag or text. Throws on markup it does not know. */
export function canonical(html: string): string[] {
  const out: string[] = [];
  let text = "";
  let consumed = 0;
  const flush = () => {
    if (text !== "") out.push(`text ${JSON.stringify(text)}`);
    text = "";
  };
  for (const m of html.matchAll(TOKEN)) {
    if (m.index !== consumed) {
      throw new Error(`unparsed markup at ${consumed}: ${html.slice(consumed, consumed + 40)}`);
    }
    consumed = m.index + m[0].length;
    if (m[1] !== undefined) {
      if (m[1].trim() !== "") throw new Error(`comment with content: ${m[0]}`);
      continue; // React's text separator: no node for the parser's text
    }
    if (m[6] !== undefined) {
      text += decode(m[6]);
      continue;
    }
    flush();
    if (m[2] === "/") {
      out.push(`</${m[3].toLowerCase()}>`);
      continue;
    }
    const attrs = [...(m[4] ?? "").matchAll(ATTR)].map(([, name, value]) => {
      const n = name.toLowerCase();
      const v = decode(value ?? "");
      return `${n}=${JSON.stringify(n === "style" ? styleValue(v) : v)}`;
    }).sort();
    const names = attrs.map((a) => a.slice(0, a.indexOf("=")));
    if (new Set(names).size !== names.length) throw new Error(`duplicate attribute: ${m[0]}`);
    out.push(`<${m[3].toLowerCase()} ${attrs.join(" ")}>`);
  }
  if (consumed !== html.length) throw new Error(`unparsed markup at ${consumed}`);
  flush();
  return out;
}
