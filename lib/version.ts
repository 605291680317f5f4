/**
 * The package version, one leaf every part reads it from (the CLI's `version`, the FastCGI
 * `SERVER_SOFTWARE`, the OTLP exporters' resource).
 *
 * @module
 */
import denoJson from "../deno.json" with { type: "json" };

/** The package version, from deno.json. */
export const VERSION: string = denoJson.version;
