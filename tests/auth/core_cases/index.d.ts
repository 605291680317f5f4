/** Types of `index.mjs`. */
export interface CoreCase {
  name: string;
  /** Whether the case needs a running fake OAuth provider (`providerUrl`). */
  provider: boolean;
  fn(ctx: { api: unknown; providerUrl?: string }): Promise<void>;
}
/** The shared cases, in order. */
export const cases: CoreCase[];
