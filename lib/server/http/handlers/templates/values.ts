/**
 * The engine's Go values and the ones the handler adds (`time.Time`), for the handler's files.
 *
 * @module
 */
export {
  FuncError,
  GoFunc,
  GoInt,
  GoObject,
  NilPtr,
  NO_FIELD,
  typeArray,
} from "./gotemplate/mod.ts";
export { GoTime } from "./time.ts";
