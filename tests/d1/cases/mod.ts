/** Every case of the flow suite, run on each backend. */
import type { Case } from "../_backend.ts";
import { signupCases } from "./signup.ts";
import { signupAgainCases } from "./signup_again.ts";
import { signupWorkCases } from "./signup_work.ts";
import { takeoverCases } from "./takeover.ts";
import { emailFormCases } from "./email_form.ts";
import { loginCases } from "./login.ts";
import { resetCases } from "./reset.ts";
import { forgotWorkCases } from "./forgot_work.ts";
import { accountCases } from "./account.ts";
import { emailChangeCases } from "./email_change.ts";
import { oauthCases } from "./oauth.ts";
import { oauthSecondFactorCases } from "./oauth_second_factor.ts";
import { sessionCases } from "./sessions.ts";
import { revocationCases } from "./revocation.ts";
import { throttleCases } from "./throttle.ts";
import { schemaCases } from "./schema.ts";
import { fuzzCases } from "./fuzz.ts";
import { adminCases } from "./admin.ts";
import { signInCases } from "./sign_ins.ts";
import { sendAfterCases } from "./send_after.ts";
import { atRestCases } from "./at_rest.ts";
import { totpCases } from "./totp.ts";
import { passkeyCases } from "./passkeys.ts";
import { userSessionCases } from "./user_sessions.ts";
import { eventCases } from "./events.ts";
import { fuzzFactorCases } from "./fuzz_factors.ts";

export const allCases: Case[] = [
  ...signupCases,
  ...signupAgainCases,
  ...signupWorkCases,
  ...takeoverCases,
  ...emailFormCases,
  ...loginCases,
  ...resetCases,
  ...forgotWorkCases,
  ...accountCases,
  ...emailChangeCases,
  ...oauthCases,
  ...oauthSecondFactorCases,
  ...sessionCases,
  ...revocationCases,
  ...throttleCases,
  ...schemaCases,
  ...fuzzCases,
  ...adminCases,
  ...signInCases,
  ...sendAfterCases,
  ...atRestCases,
  ...totpCases,
  ...passkeyCases,
  ...userSessionCases,
  ...eventCases,
  ...fuzzFactorCases,
];
