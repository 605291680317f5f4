/**
 * Arguments of `import`: `{args[0]}` (one argument, inside any token), `{args[1:]}` /
 * `{args[:]}` (a token of its own that expands to several tokens), and the deprecated
 * `{args.0}`.
 *
 * @module
 */
import type { Token } from "./lexer.ts";

/** Receives a warning about a placeholder that cannot be expanded. */
export type WarnFn = (message: string, where?: { file?: string; line?: number }) => void;

/**
 * When `token` is a variadic placeholder (`{args[a:b]}`), the range of arguments it stands
 * for; undefined otherwise (or when out of range, with a warning).
 *
 * @example
 * ```ts
 * import { variadicRange } from "./import_args.ts";
 * import { makeToken } from "./lexer.ts";
 * variadicRange(makeToken({ text: "{args[1:]}" }), 3, () => {}); // [1, 3]
 * ```
 */
export function variadicRange(
  token: Token,
  argCount: number,
  warn: WarnFn,
): [number, number] | undefined {
  const text = token.text;
  if (!text.startsWith("{args[") || !text.endsWith("]}")) return undefined;
  const range = text.slice(6, -2);
  const where = { file: token.file, line: token.line };
  if (range === "") {
    warn(`Placeholder ${text} cannot have an empty index`, where);
    return undefined;
  }
  const colon = range.indexOf(":");
  if (colon < 0) return undefined;
  const start = range.slice(0, colon), end = range.slice(colon + 1);
  // several placeholders separated by ":" are not one variadic placeholder
  if (start.includes("}") || end.includes("{")) return undefined;
  let from = 0, to = argCount;
  if (start !== "") {
    const n = goAtoi(start);
    if (n === undefined) {
      warn(`Variadic placeholder ${text} has an invalid start index`, where);
      return undefined;
    }
    from = n;
  }
  if (end !== "") {
    const n = goAtoi(end);
    if (n === undefined) {
      warn(`Variadic placeholder ${text} has an invalid end index`, where);
      return undefined;
    }
    to = n;
  }
  if (from < 0 || from > to || to > argCount) {
    warn(
      `Variadic placeholder ${text} indices are out of bounds, only ${argCount} argument(s) exist`,
      where,
    );
    return undefined;
  }
  return [from, to];
}

/** Go's `strconv.Atoi`: an optionally signed decimal integer, else undefined. */
export function goAtoi(s: string): number | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The value of one `{args...}` key, or undefined when the key is not an argument. */
function argValue(key: string, args: string[], warn: WarnFn): string | undefined {
  if (key.startsWith("args.")) {
    const idx = key.slice(5);
    if (idx === "") return undefined;
    const n = goAtoi(idx);
    if (n === undefined) {
      warn(`Placeholder {args.${idx}} has an invalid index`);
      return undefined;
    }
    if (n < 0 || n >= args.length) {
      warn(
        `Placeholder {args.${idx}} index is out of bounds, only ${args.length} argument(s) exist`,
      );
      return undefined;
    }
    warn(`Placeholder {args.${idx}} deprecated, use {args[${idx}]} instead`);
    return args[n];
  }
  if (key.startsWith("args[") && key.endsWith("]") && key.length > 6) {
    const idx = key.slice(5, -1);
    if (idx.includes(":")) {
      warn(`Variadic placeholder {args[${idx}]} must be a token on its own`);
      return undefined;
    }
    const n = goAtoi(idx);
    if (n === undefined) {
      warn(`Placeholder {args[${idx}]} has an invalid index`);
      return undefined;
    }
    if (n < 0 || n >= args.length) {
      warn(
        `Placeholder {args[${idx}]} index is out of bounds, only ${args.length} argument(s) exist`,
      );
      return undefined;
    }
    return args[n];
  }
  return undefined;
}

/**
 * Replaces the `{args[N]}` placeholders of `input` by the import's arguments and leaves
 * other placeholders as written. Like every placeholder pass, it turns `\{` and `\}` into
 * `{` and `}`. An empty argument leaves nothing.
 *
 * @example
 * ```ts
 * import { replaceArgs } from "./import_args.ts";
 * replaceArgs("hello {args[0]} {host}", ["world"], () => {}); // "hello world {host}"
 * ```
 */
export function replaceArgs(input: string, args: string[], warn: WarnFn): string {
  if (!input.includes("{") && !input.includes("}")) return input;
  let out = "";
  let last = 0;
  let unclosed = 0;
  scan: for (let i = 0; i < input.length; i++) {
    if (i > 0 && input[i - 1] === "\\" && (input[i] === "}" || input[i] === "{")) {
      out += input.slice(last, i - 1);
      last = i;
      continue;
    }
    if (input[i] !== "{") continue;
    if (unclosed > 100) return ""; // as Caddy: absurd input yields nothing
    let end = input.indexOf("}", i);
    if (end < 0) {
      unclosed++;
      continue;
    }
    while (end > 0 && end < input.length - 1 && input[end - 1] === "\\") {
      const nextEnd = input.indexOf("}", end + 1);
      if (nextEnd < 0) {
        unclosed++;
        continue scan;
      }
      end = nextEnd;
    }
    out += input.slice(last, i);
    const value = argValue(input.slice(i + 1, end), args, warn);
    if (value === undefined) {
      last = i;
      continue;
    }
    out += value;
    i = end;
    last = i + 1;
  }
  return out + input.slice(last);
}
