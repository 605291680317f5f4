/** The flow suite on a remote libSQL server (Hrana over HTTP, with an auth token). */
import { runSuite } from "./_backend.ts";
import { allCases } from "./cases/mod.ts";

runSuite("remote", allCases);
