/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/// <reference lib="dom" />
/**
 * A small React app around the React build's pages: the app keeps its own state, and each
 * page's `onSuccess` puts the site's answer into it (no page load). Rendered on the server by
 * `site.tsx` and hydrated by `client_react.tsx`.
 */
import { useEffect, useState } from "react";
import {
  type AuthResult,
  ForgotPasswordPage,
  LoginPage,
  ResetPasswordPage,
  SignupPage,
  SsoButtons,
  VerifyEmailPage,
} from "@gatehouse/gatehouse/react";
import { APP_STYLES, type AppProps } from "./props.ts";

export function App(props: AppProps) {
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => {
    document.documentElement.dataset.hydrated = "react";
  }, []);
  const onSuccess = (answer: AuthResult) => setDone(String(answer.user ?? answer.redirect));
  const common = { error: props.error, onSuccess, styles: APP_STYLES };
  return (
    <div id="app">
      {done === null ? null : <p id="done">{`Done: ${done}`}</p>}
      {props.page === "login" && (
        <LoginPage
          {...common}
          action="/api/auth/login"
          forgotHref="/forgot"
          signupHref="/signup"
          ssoSlot={<SsoButtons providers={["google", "github"]} />}
        />
      )}
      {props.page === "signup" && (
        <SignupPage
          {...common}
          action="/api/auth/signup"
          loginHref="/login"
          ssoSlot={<SsoButtons providers={["github"]} />}
        />
      )}
      {props.page === "forgot" && (
        <ForgotPasswordPage {...common} sent={props.sent} loginHref="/login" />
      )}
      {props.page === "reset" && <ResetPasswordPage {...common} token={props.token ?? ""} />}
      {props.page === "verify" && (
        <VerifyEmailPage {...common} email={props.email} loginHref="/login" />
      )}
    </div>
  );
}
