/**
 * Caddy modules Gatehouse knows of but cannot run, each with the one-line reason a config
 * naming it is refused with (instead of a bare "unknown module").
 *
 * @module
 */

const UNAVAILABLE: Record<string, string> = {
  "tls.get_certificate.tailscale":
    "Gatehouse cannot get certificates from a local Tailscale daemon; get them with `tailscale cert` and load the files (apps.tls.certificates.load_files), or use the http certificate manager",
};

/**
 * The error message for a module id the registry does not have.
 *
 * @example
 * ```ts
 * import { unknownModuleMessage } from "./unavailable.ts";
 * unknownModuleMessage("tls.get_certificate.tailscale");
 * ```
 */
export function unknownModuleMessage(id: string): string {
  const why = UNAVAILABLE[id];
  return why
    ? `module ${id} is not available here: ${why}`
    : `unknown module: ${id} (module ${id} is not available in this build; \`gatehouse list-modules\` lists the available ones)`;
}
