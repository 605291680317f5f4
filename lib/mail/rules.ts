/**
 * System automation rules and what they do when an item arrives.
 *
 * Precedence on arrival, for the rules of the item's user active at that moment:
 * 1. `auto_scan` files an open request. If `auto_shred` or `auto_discard` is also active, that
 *    final action is remembered on the item and filed when the scan completes (scan, then
 *    destroy the paper).
 * 2. Without `auto_scan`, `auto_shred` files a shred request; it wins over `auto_discard`.
 * 3. `auto_discard` alone files a discard request.
 *
 * Toggling a rule affects only later arrivals.
 *
 * @module
 */
import type { ItemAction } from "./lifecycle.ts";

/** Names accepted by `update-system-user-defined-rule`. */
export type AutomationName = "auto_scan" | "auto_shred" | "auto_discard";

/** Every automation name, in the order the rules list shows them. */
export const AUTOMATION_NAMES: readonly AutomationName[] = [
  "auto_scan",
  "auto_shred",
  "auto_discard",
];

/** A user's rule flags. */
export interface RuleFlags {
  /** Auto Scan active. */
  auto_scan: boolean;
  /** Auto Shred active. */
  auto_shred: boolean;
  /** Auto Discard active. */
  auto_discard: boolean;
}

/** What the rules file for a new item. */
export interface ArrivalPlan {
  /** Request filed at arrival, or null. */
  now: ItemAction | null;
  /** Final action filed once the arrival's open request completes, or null. */
  afterOpen: "shred" | "discard" | null;
}

/**
 * The requests the rules file for an arriving item (see the module doc for precedence).
 *
 * @example
 * ```ts
 * import { arrivalPlan } from "./rules.ts";
 * console.log(arrivalPlan({ auto_scan: false, auto_shred: true, auto_discard: true }));
 * // { now: "shred", afterOpen: null }
 * ```
 */
export function arrivalPlan(flags: RuleFlags): ArrivalPlan {
  const final = flags.auto_shred ? "shred" : flags.auto_discard ? "discard" : null;
  if (flags.auto_scan) return { now: "open", afterOpen: final };
  return { now: final, afterOpen: null };
}

/**
 * True when `name` is a known automation name.
 *
 * @example
 * ```ts
 * import { isAutomationName } from "./rules.ts";
 * console.log(isAutomationName("auto_scan")); // true
 * ```
 */
export function isAutomationName(name: unknown): name is AutomationName {
  return typeof name === "string" && (AUTOMATION_NAMES as readonly string[]).includes(name);
}
