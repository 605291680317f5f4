/** The flow suite on Cloudflare's D1 through Miniflare. */
import { runSuite } from "./_backend.ts";
import { allCases } from "./cases/mod.ts";

runSuite("d1", allCases);
