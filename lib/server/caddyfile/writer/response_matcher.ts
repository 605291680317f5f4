/**
 * Response matchers (`status_code`, `headers`) → the lines of a response matcher block:
 * `status <codes...>` (`2xx` for a class), `header <Field> <value>` and `header !<Field>`.
 * Used by `reverse_proxy`/`intercept` (named `@name { ... }` definitions), `encode` and
 * `header` (`match { ... }`).
 *
 * @module
 */
import { canonicalHeader } from "./matchers.ts";
import { childPath, isObject, type Problems } from "./problems.ts";
import { type Line, line } from "./tokens.ts";

/** The lines of response matcher `m` at `path`; null after a problem. */
export function responseMatcherLines(
  m: unknown,
  path: string,
  problems: Problems,
): Line[] | null {
  if (!isObject(m)) {
    problems.add(path, "a response matcher must be an object");
    return null;
  }
  const lines: Line[] = [];
  for (const [k, v] of Object.entries(m)) {
    const at = childPath(path, k);
    if (k === "status_code" && Array.isArray(v) && v.length > 0 && v.every(Number.isInteger)) {
      lines.push(line(["status", ...v.map((n) => n >= 1 && n <= 5 ? `${n}xx` : String(n))]));
    } else if (k === "headers" && isObject(v)) {
      for (const [field, vals] of Object.entries(v)) {
        if (vals === null) {
          lines.push(line(["header", "!" + field]));
          continue;
        }
        // the adapter writes the field canonical when it has values
        const ok = Array.isArray(vals) && vals.length > 0 &&
          vals.every((x) => typeof x === "string") && canonicalHeader(field) === field;
        if (!ok) {
          problems.add(
            childPath(at, field),
            "a response header matcher is a canonical field with one or more values, or null",
          );
          return null;
        }
        for (const val of vals as string[]) lines.push(line(["header", field, val]));
      }
    } else {
      problems.add(at, "this response matcher has no form here");
      return null;
    }
  }
  return lines;
}
