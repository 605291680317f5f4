/// <reference lib="dom" />
/**
 * A small Preact app around the Preact build's pages, the twin of `app_react.tsx` (written
 * with `h`, as the React config's JSX settings are React's): the app keeps its own state, and
 * each page's `onSuccess` puts the site's answer into it (no page load). Rendered on the
 * server by `site.tsx` and hydrated by `client_preact.ts`.
 */
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  type AuthResult,
  ForgotPasswordPage,
  LoginPage,
  ResetPasswordPage,
  SignupPage,
  SsoButtons,
  VerifyEmailPage,
} from "@gatehouse/gatehouse/preact";
import { APP_STYLES, type AppProps } from "./props.ts";

export function App(props: AppProps) {
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => {
    document.documentElement.dataset.hydrated = "preact";
  }, []);
  const onSuccess = (answer: AuthResult) => setDone(String(answer.user ?? answer.redirect));
  const common = { error: props.error, onSuccess, styles: APP_STYLES };
  return h(
    "div",
    { id: "app" },
    done === null ? null : h("p", { id: "done" }, `Done: ${done}`),
    props.page === "login" && h(LoginPage, {
      ...common,
      action: "/api/auth/login",
      forgotHref: "/forgot",
      signupHref: "/signup",
      ssoSlot: h(SsoButtons, { providers: ["google", "github"] }),
    }),
    props.page === "signup" && h(SignupPage, {
      ...common,
      action: "/api/auth/signup",
      loginHref: "/login",
      ssoSlot: h(SsoButtons, { providers: ["github"] }),
    }),
    props.page === "forgot" &&
      h(ForgotPasswordPage, { ...common, sent: props.sent, loginHref: "/login" }),
    props.page === "reset" && h(ResetPasswordPage, { ...common, token: props.token ?? "" }),
    props.page === "verify" &&
      h(VerifyEmailPage, { ...common, email: props.email, loginHref: "/login" }),
  );
}
