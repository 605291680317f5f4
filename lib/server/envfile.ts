/**
 * Parser of `--envfile` files: `KEY=VALUE` lines; blank lines and lines starting with `#`
 * are skipped; an `export ` prefix is allowed; unquoted values end at ` #` (a comment) and
 * are trimmed; double-quoted values may span lines and understand `\n \r \t \" \\ \$`;
 * single-quoted values are literal and may span lines.
 *
 * @module
 */

/** Error for a malformed env file; `line` is 1-based. */
export class EnvFileError extends Error {
  /** Stable code. */
  readonly code = "envfile";
  /** Line of the problem. */
  readonly line: number;
  /** Creates the error. */
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = "EnvFileError";
    this.line = line;
  }
}

const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\", $: "$" };

/**
 * Parses env file text into variables; later keys win.
 *
 * @example
 * ```ts
 * import { parseEnvFile } from "./envfile.ts";
 * parseEnvFile('export A=1 # one\nB="x\\ny"\n'); // { A: "1", B: "x\ny" }
 * ```
 */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  let i = 0;
  let line = 1;
  const n = src.length;
  while (i < n) {
    // one logical entry
    let end = src.indexOf("\n", i);
    if (end < 0) end = n;
    const raw = src.slice(i, end);
    const trimmed = raw.trim();
    const startLine = line;
    if (trimmed === "" || trimmed.startsWith("#")) {
      i = end + 1;
      line++;
      continue;
    }
    let body = trimmed.replace(/^export\s+/, "");
    const eq = body.indexOf("=");
    if (eq < 0) {
      throw new EnvFileError(startLine, `missing '=' in ${JSON.stringify(trimmed.slice(0, 40))}`);
    }
    const key = body.slice(0, eq).trim();
    if (key === "") throw new EnvFileError(startLine, "missing variable name");
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(key)) {
      throw new EnvFileError(startLine, `invalid variable name ${JSON.stringify(key)}`);
    }
    body = body.slice(eq + 1).trimStart();
    const quote = body[0];
    if (quote === '"' || quote === "'") {
      // scan from the opening quote in the source text, across lines
      let j = i + raw.indexOf(quote, raw.indexOf("=") + 1) + 1;
      let value = "";
      let closed = false;
      while (j < n) {
        const c = src[j];
        if (c === "\n") line++;
        if (quote === '"' && c === "\\" && j + 1 < n) {
          const e = src[j + 1];
          value += ESCAPES[e] ?? "\\" + e;
          if (e === "\n") line++;
          j += 2;
          continue;
        }
        if (c === quote) {
          closed = true;
          j++;
          break;
        }
        value += c;
        j++;
      }
      if (!closed) throw new EnvFileError(startLine, `unterminated quoted value for ${key}`);
      let rest = src.indexOf("\n", j);
      if (rest < 0) rest = n;
      const tail = src.slice(j, rest).trim();
      if (tail !== "" && !tail.startsWith("#")) {
        throw new EnvFileError(line, `unexpected text after quoted value for ${key}`);
      }
      out[key] = value;
      i = rest + 1;
      line++;
      continue;
    }
    const hash = body.search(/\s#/);
    out[key] = (hash >= 0 ? body.slice(0, hash) : body).trim();
    i = end + 1;
    line++;
  }
  return out;
}
