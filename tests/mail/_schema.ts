/** A small JSON Schema checker for the subset the OpenAPI document uses. */

type Schema = Record<string, unknown>;

/** Returns the list of problems of `value` against `schema` (empty when valid). */
export function check(doc: Schema, schema: Schema, value: unknown, path = "$"): string[] {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    const target = (doc.components as { schemas: Record<string, Schema> }).schemas[name];
    if (!target) return [`${path}: unknown $ref ${schema.$ref}`];
    return check(doc, target, value, path);
  }
  const errors: string[] = [];
  const types = schema.type === undefined
    ? []
    : Array.isArray(schema.type)
    ? schema.type as string[]
    : [schema.type as string];
  const typeOf = (v: unknown): string =>
    v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
  const actual = typeOf(value);
  if (
    types.length &&
    !types.some((t) => t === actual || (t === "number" && actual === "integer"))
  ) {
    return [`${path}: expected ${types.join("|")}, got ${actual}`];
  }
  if (schema.const !== undefined && value !== schema.const) {
    errors.push(`${path}: expected ${schema.const}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  }
  if (typeof schema.pattern === "string" && typeof value === "string") {
    if (!new RegExp(schema.pattern).test(value)) errors.push(`${path}: pattern mismatch`);
  }
  if (typeof schema.minimum === "number" && typeof value === "number" && value < schema.minimum) {
    errors.push(`${path}: below minimum`);
  }
  if (schema.format === "uri" && typeof value === "string") {
    try {
      new URL(value);
    } catch {
      errors.push(`${path}: not a URI`);
    }
  }
  if (actual === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const req of (schema.required as string[] | undefined) ?? []) {
      if (!(req in obj)) errors.push(`${path}.${req}: missing`);
    }
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...check(doc, props[k], v, `${path}.${k}`));
      else if (schema.properties) errors.push(`${path}.${k}: not documented`);
    }
  }
  if (actual === "array" && schema.items) {
    (value as unknown[]).forEach((v, i) =>
      errors.push(...check(doc, schema.items as Schema, v, `${path}[${i}]`))
    );
  }
  return errors;
}
