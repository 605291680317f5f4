/** The flow suite on libSQL (a temp file). */
import { runSuite } from "./_backend.ts";
import { allCases } from "./cases/mod.ts";

runSuite("libsql", allCases);
