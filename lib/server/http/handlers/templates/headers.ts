/**
 * `.RespHeader` (Caddy's `WrappedHeader`): the response's header fields with `Add`, `Set` and
 * `Del`, which return "" so that an action prints nothing, and `http.Header`'s `Get` and
 * `Values`.
 *
 * @module
 */
import { GoFunc, GoObject, NO_FIELD, typeArray } from "./gotemplate/mod.ts";
import { goHeader } from "./request.ts";

/** `templates.WrappedHeader`. */
export class GoHeaders extends GoObject {
  readonly goType = "templates.WrappedHeader";
  constructor(readonly headers: Headers) {
    super();
  }
  override method(name: string): GoFunc | undefined {
    const h = this.headers;
    const two = (impl: (k: string, v: string) => void) =>
      new GoFunc(name, ["string", "string"], null, (k, v) => {
        impl(k as string, v as string);
        return "";
      }, false);
    switch (name) {
      case "Add":
        return two((k, v) => h.append(k, v));
      case "Set":
        return two((k, v) => h.set(k, v));
      case "Del":
        return new GoFunc(name, ["string"], null, (k) => {
          h.delete(k as string);
          return "";
        }, false);
      case "Get":
        return new GoFunc(
          name,
          ["string"],
          null,
          (k) => h.get(k as string)?.split(", ")[0] ?? "",
          false,
        );
      case "Values":
        return new GoFunc(name, ["string"], null, (k) => {
          const v = h.get(k as string);
          return typeArray(v === null ? [] : [v], "[]string");
        }, false);
    }
    return undefined;
  }
  override field(name: string): unknown {
    if (name === "Header") return goHeader(this.headers);
    return NO_FIELD;
  }
  override format(): string {
    return `{${goHeader(this.headers).format()}}`;
  }
}
