/**
 * Header operations (`add`, `set`, `delete`, `replace`) as Gatehousefile lines: `+Field
 * value`, `Field value`, `-Field`, `Field search replacement`. Shared by `header`,
 * `request_header` and `reverse_proxy`'s `header_up` / `header_down`, as the adapter shares
 * one parser for them.
 *
 * @module
 */
import { canonicalHeader } from "./matchers.ts";
import { childPath, type Fields, isObject } from "./problems.ts";
import { type Line, line } from "./tokens.ts";

/** Reads a header-ops object; returns one line per operation, or null after a problem. */
export function headerOpLines(f: Fields, setPrefix = ""): Line[] | null {
  const out: Line[] = [];
  let ok = true;
  const canonical = (field: string, path: string): boolean => {
    if (canonicalHeader(field) === field && !/^[+\-?>]/.test(field)) return true;
    f.problems.add(
      path,
      `header field ${JSON.stringify(field)} is not in canonical form (${
        canonicalHeader(field)
      }), which the Gatehousefile always writes`,
    );
    ok = false;
    return false;
  };
  const add = f.obj("add");
  for (const [field, vals] of Object.entries(add ?? {})) {
    if (!canonical(field, childPath(f.at("add"), field))) continue;
    for (const v of Array.isArray(vals) ? vals : []) out.push(line(["+" + field, String(v)]));
  }
  const set = f.obj("set");
  for (const [field, vals] of Object.entries(set ?? {})) {
    if (!canonical(field, childPath(f.at("set"), field))) continue;
    if (!Array.isArray(vals) || vals.length !== 1 || typeof vals[0] !== "string") {
      f.problems.add(
        childPath(f.at("set"), field),
        "setting a header to other than exactly one value has no Gatehousefile form",
      );
      ok = false;
      continue;
    }
    out.push(line([setPrefix + field, vals[0]]));
  }
  for (const d of f.strs("delete") ?? []) out.push(line(["-" + d]));
  const replace = f.obj("replace");
  for (const [field, reps] of Object.entries(replace ?? {})) {
    if (/^[+\-?>]/.test(field)) {
      f.problems.add(childPath(f.at("replace"), field), "a field starting with +, -, ? or >");
      ok = false;
      continue;
    }
    for (const r of Array.isArray(reps) ? reps : []) {
      if (
        !isObject(r) || typeof r.search_regexp !== "string" ||
        Object.keys(r).some((k) => k !== "search_regexp" && k !== "replace")
      ) {
        f.problems.add(
          childPath(f.at("replace"), field),
          "only search_regexp replacements have a Gatehousefile form",
        );
        ok = false;
        continue;
      }
      out.push(line([field, r.search_regexp, String(r.replace ?? "")]));
    }
  }
  return ok ? out : null;
}
