/** Every case of the flow suite, run on each backend. */
import type { Case } from "../_backend.ts";
import { signupCases } from "./signup.ts";

export const allCases: Case[] = [
  ...signupCases,
];
