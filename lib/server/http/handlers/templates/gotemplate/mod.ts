/**
 * A Go `text/template` engine: the lexer (`lex.ts`), the parser (`parse.ts`, trees of
 * `node.ts`), the executor (`exec.ts`), Go's builtins (`builtins.ts`), `fmt` (`fmt.ts`) and the
 * value model (`value.ts`) that maps Go's types onto JavaScript values.
 *
 * @module
 */
export { Template, type TemplateOptions } from "./template.ts";
export { TemplateError } from "./error.ts";
export { FuncError, GoFunc, GoInt, GoObject, NilPtr, NO_FIELD, typeArray } from "./value.ts";
export type { ParamType } from "./value.ts";
export { sprint, sprintf, sprintValue } from "./fmt.ts";
export { evalArgs, htmlEscape, jsEscape, pathEscape, queryEscape } from "./builtins.ts";
