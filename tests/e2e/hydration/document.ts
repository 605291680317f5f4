/**
 * The test app's pages as `renderAuthDocument` data: the same props `app_react.tsx` and
 * `app_preact.ts` pass (action, links, styles, SSO providers), as JSON, so the document
 * site of `site.tsx` serves the same pages through the React build's document helpers.
 */
import type { AuthPageData } from "@gatehouse/gatehouse/react";
import { APP_STYLES, type AppProps } from "./props.ts";

/** The data of a page for `renderAuthDocument`. */
export function documentData(props: AppProps): AuthPageData {
  const common = { error: props.error, styles: APP_STYLES };
  switch (props.page) {
    case "login":
      return {
        page: "login",
        props: {
          ...common,
          action: "/api/auth/login",
          forgotHref: "/forgot",
          signupHref: "/signup",
        },
        sso: { providers: ["google", "github"] },
      };
    case "signup":
      return {
        page: "signup",
        props: { ...common, action: "/api/auth/signup", loginHref: "/login" },
        sso: { providers: ["github"] },
      };
    case "forgot":
      return { page: "forgot", props: { ...common, sent: props.sent, loginHref: "/login" } };
    case "reset":
      return { page: "reset", props: { ...common, token: props.token ?? "" } };
    case "verify":
      return { page: "verify", props: { ...common, email: props.email, loginHref: "/login" } };
  }
}
