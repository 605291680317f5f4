/**
 * Package requests of `install`, `add-package` and `remove-package`: `name`, `name@range`,
 * `@scope/name@range`, with an optional `npm:` or `jsr:` prefix (bare names are npm packages).
 *
 * @module
 */
import { UsageError } from "./usage_error.ts";

/** A package as asked for: registry, name and the version range (empty: the latest). */
export interface PackageRequest {
  /** `npm` or `jsr`. */
  registry: "npm" | "jsr";
  /** Package name, e.g. `gatehouse-plugin-greet` or `@acme/gatehouse-auth`. */
  name: string;
  /** Version, range or dist-tag as written, e.g. `^1.2.0`; empty for the latest release. */
  range: string;
}

const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const JSR_NAME = /^@[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/;
const RANGE = /^[A-Za-z0-9.^~<>=|*+ -]+$/;

/**
 * Parses a package request; throws a UsageError naming what is wrong.
 *
 * @example
 * ```ts
 * import { parsePackageRequest } from "./package_spec.ts";
 * parsePackageRequest("gatehouse-plugin-greet@^1");
 * // { registry: "npm", name: "gatehouse-plugin-greet", range: "^1" }
 * ```
 */
export function parsePackageRequest(text: string): PackageRequest {
  let rest = text.trim();
  let registry: "npm" | "jsr" = "npm";
  if (rest.startsWith("npm:") || rest.startsWith("jsr:")) {
    registry = rest.slice(0, 3) as "npm" | "jsr";
    rest = rest.slice(4);
  }
  const at = rest.indexOf("@", rest.startsWith("@") ? 1 : 0);
  const name = at < 0 ? rest : rest.slice(0, at);
  const range = at < 0 ? "" : rest.slice(at + 1);
  if (!(registry === "npm" ? NPM_NAME : JSR_NAME).test(name)) {
    throw new UsageError(
      `${JSON.stringify(text)} is not a package name: write name, name@version, @scope/name@range` +
        (registry === "jsr" ? " (JSR packages are always scoped: jsr:@scope/name)" : ""),
    );
  }
  if (at >= 0 && !RANGE.test(range)) {
    throw new UsageError(
      `${JSON.stringify(text)}: ${JSON.stringify(range)} is not a version, range or tag`,
    );
  }
  return { registry, name, range };
}

/**
 * The package's identity, `npm:name` or `jsr:@scope/name`: what `list-modules --packages`
 * prints and what `remove-package` matches.
 *
 * @example
 * ```ts
 * import { packageId } from "./package_spec.ts";
 * packageId({ registry: "npm", name: "gatehouse-plugin-greet", range: "^1" });
 * // "npm:gatehouse-plugin-greet"
 * ```
 */
export function packageId(request: PackageRequest): string {
  return `${request.registry}:${request.name}`;
}

/**
 * The import specifier of a request (`npm:name@range`, or `npm:name` for the latest).
 *
 * @example
 * ```ts
 * import { packageSpecifier } from "./package_spec.ts";
 * packageSpecifier({ registry: "npm", name: "hono", range: "" }); // "npm:hono"
 * ```
 */
export function packageSpecifier(request: PackageRequest, subpath = ""): string {
  return `${packageId(request)}${request.range ? `@${request.range}` : ""}${subpath}`;
}
