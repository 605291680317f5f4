/**
 * Single sign-on buttons: one link per configured provider.
 *
 * @module
 */
import type { AuthRuntime } from "./runtime.ts";
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

/** Builds the SsoButtons component over a runtime. */
export function createSsoButtons<E>(rt: AuthRuntime<E>): (props: SsoButtonsProps) => E | null {
  const h = rt.createElement;
  return function SsoButtons(props: SsoButtonsProps): E | null {
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
              href: (props.basePath ?? "") +
                template.replaceAll("{provider}", encodeURIComponent(p)),
              style: styleFor(props.styles, "ssoButton"),
            },
            `Continue with ${props.labels?.[p] ?? names[p] ?? p}`,
          ),
        )
      ),
    );
  };
}
