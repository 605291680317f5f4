/**
 * Response matchers (`status_code`, `headers`) → the lines of a response matcher block:
 * `status <codes...>` (`2xx` for a class), `header <Field> <value>` and `header !<Field>`.
 * Used by `reverse_proxy`/`intercept` (named `@name { ... }` definitions, with their
 * `handle_response` and `replace_status` lines), `encode` and `header` (`match { ... }`).
 *
 * @module
 */
import type { Ctx } from "./context.ts";
import { canonicalHeader } from "./matchers.ts";
import { childPath, Fields, isObject, type Problems } from "./problems.ts";
import { bare, type Line, line, statusText } from "./tokens.ts";

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

function namedResponseMatcher(m: unknown, name: string, path: string, f: Fields): Line | null {
  const lines = responseMatcherLines(m, path, f.problems);
  return lines && { words: [bare("@" + name)], block: lines };
}

/** `handle_response` / `replace_status` lines with named response matchers (also `intercept`). */
export function handleResponseLines(f: Fields, ctx: Ctx, from = 0): Line[] {
  const block: Line[] = [];
  const hr = f.arr("handle_response") ?? [];
  let n = 0;
  hr.forEach((h, i) => {
    if (i < from) return;
    const hp = childPath(f.at("handle_response"), i);
    if (!isObject(h)) return;
    const hf = new Fields(h, hp, f.problems);
    const match = hf.take("match");
    let matcher: string | undefined;
    if (match !== undefined) {
      matcher = `resp${n++}`;
      const def = namedResponseMatcher(match, matcher, hf.at("match"), f);
      if (!def) return;
      block.push(def);
    }
    const status = statusText(hf.take("status_code"));
    const routes = hf.arr("routes");
    hf.done("a handle_response");
    if (routes) {
      block.push(
        line(
          ["handle_response", ...(matcher ? [bare("@" + matcher)] : [])],
          ctx.routes(routes, hp + "/routes", true),
        ),
      );
    } else if (status !== undefined) {
      block.push(line(["replace_status", ...(matcher ? [bare("@" + matcher)] : []), status]));
    }
  });
  return block;
}
