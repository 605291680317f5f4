/**
 * Go's `fmt` for template values: `Sprint`, `Sprintln`, `Sprintf` (flags `+-# 0`, width,
 * precision, `*`, the verbs `%v %+v %T %s %q %d %b %o %O %x %X %c %U %e %E %f %F %g %G %t %%`)
 * and Go's float and quoting rules (`strconv.FormatFloat`, `strconv.Quote`). Values follow
 * value.ts. Not done: `%p`, hexadecimal floats (`%x` of a float64), explicit argument indexes
 * (`%[1]d`), and `%#v` beyond strings, numbers and bools.
 *
 * @module
 */
import { GoFunc, GoInt, GoObject, isMap, mapEntries, NilPtr, typeName, utf8 } from "./value.ts";

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's `unicode.IsPrint`. */
export function isPrint(r: string): boolean {
  return PRINTABLE.test(r);
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/** Go's `strconv.Quote` (`ascii`: `QuoteToASCII`; `quote`: the quote character). */
export function quote(s: string, ascii = false, q = '"'): string {
  let out = q;
  for (const r of s) {
    const cp = r.codePointAt(0)!;
    if (r === q || r === "\\") {
      out += "\\" + r;
      continue;
    }
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += "\\ufffd";
      continue;
    }
    if (ascii ? cp < 0x80 && isPrint(r) : isPrint(r)) {
      out += r;
      continue;
    }
    switch (r) {
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += "\\x" + hex(cp, 2);
    else if (cp < 0x10000) out += "\\u" + hex(cp, 4);
    else out += "\\U" + hex(cp, 8);
  }
  return out + q;
}

/** The shortest decimal digits of |x| and the decimal point's position (`0.ddd × 10^dp`). */
function shortestDigits(x: number): { digits: string; dp: number } {
  const [m, e] = Math.abs(x).toExponential().split("e");
  return { digits: m.replace(".", ""), dp: Number(e) + 1 };
}

/** The digits of |x| rounded to `n` significant digits, trailing zeros dropped. */
function roundedDigits(x: number, n: number): { digits: string; dp: number } {
  const [m, e] = Math.abs(x).toExponential(Math.max(0, Math.min(100, n - 1))).split("e");
  let digits = m.replace(".", "").replace(/0+$/, "");
  if (digits === "") digits = "0";
  return { digits, dp: Number(e) + 1 };
}

function expString(exp: number, upper: boolean): string {
  const sign = exp < 0 ? "-" : "+";
  const a = Math.abs(exp);
  return (upper ? "E" : "e") + sign + (a < 10 ? "0" + a : String(a));
}

/** `%e` of digits: `d.ddde±dd` with `prec` decimals (-1: as many as the digits). */
function fmtE(digits: string, dp: number, prec: number, upper: boolean): string {
  let s = digits[0] ?? "0";
  const rest = digits.slice(1);
  const decimals = prec < 0 ? rest.length : prec;
  if (decimals > 0) {
    s += "." + (rest + "0".repeat(Math.max(0, decimals - rest.length))).slice(0, decimals);
  }
  const exp = digits === "0" ? 0 : dp - 1;
  return s + expString(exp, upper);
}

/** `%f` of digits with `decimals` decimals. */
function fmtF(digits: string, dp: number, decimals: number): string {
  let int: string;
  if (dp > 0) {
    int = dp >= digits.length ? digits + "0".repeat(dp - digits.length) : digits.slice(0, dp);
  } else int = "0";
  let s = int;
  if (decimals > 0) {
    let frac = "";
    for (let i = 0; i < decimals; i++) {
      const j = dp + i;
      frac += j < 0 || j >= digits.length ? "0" : digits[j];
    }
    s += "." + frac;
  }
  return s;
}

/**
 * Go's `strconv.FormatFloat(x, fmt, prec, 64)` for `e`, `E`, `f`, `g`, `G` (prec -1: the
 * shortest representation that reads back as x).
 */
export function formatFloat(x: number, verb: string, prec: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  const neg = x < 0 || Object.is(x, -0);
  const sign = neg ? "-" : "";
  const upper = verb === "E" || verb === "G";
  if (x === 0) {
    const z = { digits: "0", dp: 1 };
    if (verb === "e" || verb === "E") {
      return sign + fmtE(z.digits, z.dp, prec < 0 ? 0 : prec, upper);
    }
    if (verb === "f" || verb === "F") return sign + fmtF(z.digits, z.dp, prec < 0 ? 0 : prec);
    return sign + "0";
  }
  switch (verb) {
    case "e":
    case "E": {
      const d = prec < 0 ? shortestDigits(x) : roundedDigits(x, prec + 1);
      return sign + fmtE(d.digits, d.dp, prec, upper);
    }
    case "f":
    case "F": {
      if (prec < 0) {
        const d = shortestDigits(x);
        return sign + fmtF(d.digits, d.dp, Math.max(d.digits.length - d.dp, 0));
      }
      const abs = Math.abs(x);
      if (abs < 1e21 && prec <= 100) return sign + abs.toFixed(prec);
      const d = shortestDigits(x);
      return sign + fmtF(d.digits, d.dp, prec);
    }
    default: {
      // g, G
      const shortest = prec < 0;
      let p = prec === 0 ? 1 : prec;
      const d = shortest ? shortestDigits(x) : roundedDigits(x, p);
      let eprec = shortest ? 6 : p;
      if (!shortest && eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
      const exp = d.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (shortest || p > d.digits.length) p = d.digits.length;
        return sign + fmtE(d.digits, d.dp, p - 1, upper);
      }
      if (shortest || p > d.dp) p = d.digits.length;
      return sign + fmtF(d.digits, d.dp, Math.max(p - d.dp, 0));
    }
  }
}

/** The flags, width and precision of one verb. */
interface Spec {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width: number;
  prec: number;
}

const PLAIN: Spec = {
  plus: false,
  minus: false,
  sharp: false,
  space: false,
  zero: false,
  width: -1,
  prec: -1,
};

function pad(s: string, f: Spec, numeric = false): string {
  const n = [...s].length;
  if (f.width < 0 || n >= f.width) return s;
  const fill = f.width - n;
  if (f.minus) return s + " ".repeat(fill);
  if (f.zero && numeric) {
    const m = /^[+\- ]?(0[xXbBoO])?/.exec(s)![0];
    return m + "0".repeat(fill) + s.slice(m.length);
  }
  if (f.zero && !numeric) return "0".repeat(fill) + s;
  return " ".repeat(fill) + s;
}

function fmtInt(v: bigint, verb: string, f: Spec, unsigned: boolean): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  let digits: string;
  let prefix = "";
  switch (verb) {
    case "d":
    case "v":
      digits = a.toString(10);
      break;
    case "b":
      digits = a.toString(2);
      if (f.sharp) prefix = "0b";
      break;
    case "o":
      digits = a.toString(8);
      if (f.sharp && digits[0] !== "0") prefix = "0";
      break;
    case "O":
      digits = a.toString(8);
      prefix = "0o";
      break;
    case "x":
      digits = a.toString(16);
      if (f.sharp) prefix = "0x";
      break;
    case "X":
      digits = a.toString(16).toUpperCase();
      if (f.sharp) prefix = "0X";
      break;
    case "c":
      return pad(runeString(v), f);
    case "q":
      return pad(quote(runeString(v), f.plus, "'"), f);
    case "U": {
      const u = "U+" + a.toString(16).toUpperCase().padStart(4, "0");
      return pad(f.sharp && a <= 0x10ffffn ? `${u} '${runeString(v)}'` : u, f);
    }
    default:
      return "";
  }
  if (f.prec >= 0) {
    if (f.prec === 0 && a === 0n) digits = "";
    digits = digits.padStart(f.prec, "0");
  }
  void unsigned;
  const sign = neg ? "-" : f.plus ? "+" : f.space ? " " : "";
  const s = sign + prefix + digits;
  return pad(s, f.prec >= 0 ? { ...f, zero: false } : f, true);
}

function runeString(v: bigint): string {
  const n = Number(v);
  if (n < 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(n);
}

function fmtFloatVerb(x: number, verb: string, f: Spec): string {
  let s: string;
  switch (verb) {
    case "v":
      s = formatFloat(x, "g", f.prec);
      break;
    case "e":
    case "E":
    case "f":
    case "F":
      s = formatFloat(x, verb === "F" ? "f" : verb, f.prec < 0 ? 6 : f.prec);
      break;
    case "g":
    case "G":
      s = formatFloat(x, verb, f.prec);
      break;
    default:
      return "";
  }
  if (f.sharp && (verb === "v" || verb === "g" || verb === "G") && !/[.eEnN]/.test(s)) {
    // %#g keeps a decimal point
    s += ".";
  }
  if (!s.startsWith("-") && !s.startsWith("+")) {
    if (f.plus) s = "+" + s;
    else if (f.space) s = " " + s;
  } else if (s.startsWith("+") && !f.plus) {
    s = f.space ? " " + s.slice(1) : s.slice(1);
  }
  if (/Inf|NaN/.test(s)) return pad(s, { ...f, zero: false });
  return pad(s, f, true);
}

function fmtString(s: string, verb: string, f: Spec): string {
  if (f.prec >= 0 && (verb === "s" || verb === "v" || verb === "q")) {
    s = [...s].slice(0, f.prec).join("");
  }
  switch (verb) {
    case "v":
      if (f.sharp) return pad(quote(s), f);
      return pad(s, f);
    case "s":
      return pad(s, f);
    case "q":
      // deno-lint-ignore no-control-regex
      if (f.sharp && !/[`\x00-\x08\x0a-\x1f\x7f\ufffd]/.test(s)) return pad("`" + s + "`", f);
      return pad(quote(s, f.plus), f);
    case "x":
    case "X": {
      let bytes = utf8(s);
      if (f.prec >= 0) bytes = bytes.subarray(0, f.prec);
      const parts = [...bytes].map((b) => {
        const h = hex(b, 2);
        return verb === "X" ? h.toUpperCase() : h;
      });
      const pre = f.sharp ? (verb === "X" ? "0X" : "0x") : "";
      if (f.space) return pad(parts.map((p) => pre + p).join(" "), f);
      return pad(pre + parts.join(""), f);
    }
  }
  return "";
}

const INT_VERBS = "vdboOxXcqU";
const FLOAT_VERBS = "veEfFgG";
const STRING_VERBS = "vsqxX";

/** Formats one value with one verb, `%!verb(type=value)` when the verb does not fit. */
export function formatValue(v: unknown, verb: string, f: Spec = PLAIN, depth = 0): string {
  if (verb === "T") return pad(typeName(v), f);
  if (v === undefined || v === null) {
    return verb === "v" ? pad("<nil>", f) : `%!${verb}(<nil>)`;
  }
  const bad = () => `%!${verb}(${typeName(v)}=${formatValue(v, "v", PLAIN, depth)})`;
  if (v instanceof NilPtr) return verb === "v" || verb === "s" ? pad("<nil>", f) : bad();
  switch (typeof v) {
    case "boolean":
      return verb === "v" || verb === "t" ? pad(String(v), f) : bad();
    case "bigint":
      return INT_VERBS.includes(verb) ? fmtInt(v, verb, f, false) : bad();
    case "number":
      return FLOAT_VERBS.includes(verb) ? fmtFloatVerb(v, verb, f) : bad();
    case "string":
      return STRING_VERBS.includes(verb) ? fmtString(v, verb, f) : bad();
  }
  if (v instanceof GoInt) {
    return INT_VERBS.includes(verb) ? fmtInt(v.v, verb, f, v.unsigned) : bad();
  }
  if (v instanceof Uint8Array) {
    if (verb === "s" || verb === "q" || verb === "x" || verb === "X") {
      return fmtString(new TextDecoder().decode(v), verb, f);
    }
    return "[" + [...v].map((b) => formatValue(BigInt(b), verb, f, depth + 1)).join(" ") + "]";
  }
  if (Array.isArray(v)) {
    if (depth > 20) return "[...]";
    return "[" + v.map((e) => formatValue(e, verb, f, depth + 1)).join(" ") + "]";
  }
  if (isMap(v)) {
    if (depth > 20) return "map[...]";
    const parts = mapEntries(v).map(([k, e]) =>
      `${formatValue(k, verb, f, depth + 1)}:${formatValue(e, verb, f, depth + 1)}`
    );
    return "map[" + parts.join(" ") + "]";
  }
  if (v instanceof GoObject) {
    if (v.kind === "string") {
      return STRING_VERBS.includes(verb) ? fmtString(v.str(), verb, f) : bad();
    }
    return verb === "v" || verb === "s" ? pad(v.format(), f) : bad();
  }
  if (v instanceof GoFunc) return `%!${verb}(func=0x0)`;
  if (v instanceof Date) return pad(goTime(v), f);
  return pad(String(v), f);
}

/** A time as Go's `time.Time.String` prints it. */
export function goTime(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const off = -d.getTimezoneOffset();
  const zone = `${off >= 0 ? "+" : "-"}${p(Math.floor(Math.abs(off) / 60))}${
    p(Math.abs(off) % 60)
  }`;
  const name = off === 0 ? "UTC" : zone;
  const ms = d.getMilliseconds();
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${
    p(d.getMinutes())
  }:${p(d.getSeconds())}${ms ? "." + p(ms, 3).replace(/0+$/, "") : ""} ${zone} ${name}`;
}

/** `%v` of a value. */
export function sprintValue(v: unknown): string {
  return formatValue(v, "v");
}

function isStringValue(v: unknown): boolean {
  return typeof v === "string" || (v instanceof GoObject && v.kind === "string");
}

/** Go's `fmt.Sprint`: a space between operands when neither is a string. */
export function sprint(args: unknown[]): string {
  let out = "";
  let prevString = false;
  args.forEach((a, i) => {
    const isString = isStringValue(a);
    if (i > 0 && !isString && !prevString) out += " ";
    out += sprintValue(a);
    prevString = isString;
  });
  return out;
}

/** Go's `fmt.Sprintln`: operands separated by spaces, then a newline. */
export function sprintln(args: unknown[]): string {
  return args.map(sprintValue).join(" ") + "\n";
}

/** Go's `fmt.Sprintf`. */
export function sprintf(format: string, args: unknown[]): string {
  let out = "";
  let argNum = 0;
  let i = 0;
  const n = format.length;
  while (i < n) {
    const pct = format.indexOf("%", i);
    if (pct < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, pct);
    i = pct + 1;
    const f: Spec = { ...PLAIN };
    for (; i < n; i++) {
      const c = format[i];
      if (c === "+") f.plus = true;
      else if (c === "-") f.minus = true;
      else if (c === "#") f.sharp = true;
      else if (c === " ") f.space = true;
      else if (c === "0") f.zero = !f.minus;
      else break;
    }
    // width
    if (format[i] === "*") {
      i++;
      const w = args[argNum++];
      if (typeof w === "bigint" || w instanceof GoInt) {
        let wn = Number(typeof w === "bigint" ? w : w.v);
        if (wn < 0) {
          f.minus = true;
          wn = -wn;
        }
        f.width = wn;
      } else out += "%!(BADWIDTH)";
    } else {
      const m = /^\d+/.exec(format.slice(i));
      if (m) {
        f.width = Number(m[0]);
        i += m[0].length;
      }
    }
    if (format[i] === ".") {
      i++;
      if (format[i] === "*") {
        i++;
        const p = args[argNum++];
        if (typeof p === "bigint" || p instanceof GoInt) {
          f.prec = Number(typeof p === "bigint" ? p : p.v);
          if (f.prec < 0) {
            f.prec = -1;
            out += "%!(BADPREC)";
          }
        } else out += "%!(BADPREC)";
      } else {
        const m = /^\d+/.exec(format.slice(i));
        f.prec = m ? Number(m[0]) : 0;
        if (m) i += m[0].length;
      }
    }
    if (f.minus) f.zero = false;
    if (i >= n) {
      out += "%!(NOVERB)";
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (argNum >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const arg = args[argNum++];
    if (verb === "v" && f.plus && !(typeof arg === "number" || typeof arg === "bigint")) {
      f.plus = false;
    }
    const s = formatValue(arg, verb, f);
    out += s === "" && !isStringValue(arg) ? `%!${verb}(${typeName(arg)}=${sprintValue(arg)})` : s;
  }
  if (argNum < args.length) {
    out += "%!(EXTRA " + args.slice(argNum).map((a) =>
      a === undefined || a === null ? "<nil>" : `${typeName(a)}=${sprintValue(a)}`
    ).join(", ") + ")";
  }
  return out;
}
