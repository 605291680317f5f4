/**
 * Single sign-on buttons: one link per configured provider.
 *
 * @module
 */
import type { AuthElement } from "./types.ts";
import { h } from "preact";
import { type AuthStyles, styleFor } from "./styles.ts";

/** Props of {@linkcode SsoButtons}. */
export interface SsoButtonsProps {
  /** Provider ids, e.g. `["google", "github", "microsoft"]`; one link each, in order. */
  providers: string[];
  /** Prefix of every link, for a site mounted under a path (e.g. `/owner`); default none. */
  basePath?: string;
  /**
   * Path of each link with `{provider}` in place of the provider id; default
   * `/api/auth/oauth/{provider}/start`. A site using a relay broker points this at its
   * relay start route instead.
   */
  hrefTemplate?: string;
  /** Names shown for provider ids; built in: Google, GitHub, Microsoft. */
  labels?: Record<string, string>;
  /** Per-element style overrides (`sso`, `ssoButton`). */
  styles?: AuthStyles;
}

const names: Record<string, string> = {
  google: "Google",
  github: "GitHub",
  microsoft: "Microsoft",
};

/**
 * Links to `/api/auth/oauth/{provider}/start` for each provider, labelled "Continue with …".
 * Plain links: they work the same with JavaScript off.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { SsoButtons } from "@gatehouse/gatehouse/react";
 * renderToString(h(SsoButtons, { providers: ["github"] }));
 * // <ul ...><li><a href="/api/auth/oauth/github/start" ...>Continue with GitHub</a></li></ul>
 * ```
 */
export function SsoButtons(props: SsoButtonsProps): AuthElement | null {
  if (props.providers.length === 0) return null;
  const template = props.hrefTemplate ?? "/api/auth/oauth/{provider}/start";
  return h(
    "ul",
    { style: styleFor(props.styles, "sso"), "aria-label": "Sign in with another account" },
    props.providers.map((p) =>
      h(
        "li",
        { key: p },
        h(
          "a",
          {
            href: (props.basePath ?? "") + template.replaceAll("{provider}", encodeURIComponent(p)),
            style: styleFor(props.styles, "ssoButton"),
          },
          `Continue with ${props.labels?.[p] ?? names[p] ?? p}`,
        ),
      )
    ),
  );
}
