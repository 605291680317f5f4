/**
 * The item state machine. Customers file requests (open, rescan, shred, discard) and may
 * cancel them while pending; the mailroom completes or fails pending requests.
 *
 * ```
 * received ──open──▶ open_requested ──complete──▶ opened ──rescan──▶ rescan_requested ──complete──▶ opened
 * received|opened ──shred──▶ shred_requested ──complete──▶ shredded (final)
 * received|opened ──discard──▶ discard_requested ──complete──▶ discarded (final)
 * X_requested ──cancel X (customer) or fail (mailroom)──▶ the state before the request
 * ```
 *
 * @module
 */

/** Every state of a mail item. `shredded` and `discarded` are final. */
export type ItemStatus =
  | "received"
  | "open_requested"
  | "opened"
  | "rescan_requested"
  | "shred_requested"
  | "shredded"
  | "discard_requested"
  | "discarded";

/** A request a customer files on an item. */
export type ItemAction = "open" | "rescan" | "shred" | "discard";

/** All item states, in lifecycle order. */
export const ITEM_STATUSES: readonly ItemStatus[] = [
  "received",
  "open_requested",
  "opened",
  "rescan_requested",
  "shred_requested",
  "shredded",
  "discard_requested",
  "discarded",
];

/** All actions, in the order the API lists them. */
export const ITEM_ACTIONS: readonly ItemAction[] = ["open", "rescan", "shred", "discard"];

interface RequestShape {
  from: readonly ItemStatus[];
  pending: ItemStatus;
  done: ItemStatus;
}

const REQUESTS: Record<ItemAction, RequestShape> = {
  open: { from: ["received"], pending: "open_requested", done: "opened" },
  rescan: { from: ["opened"], pending: "rescan_requested", done: "opened" },
  shred: { from: ["received", "opened"], pending: "shred_requested", done: "shredded" },
  discard: { from: ["received", "opened"], pending: "discard_requested", done: "discarded" },
};

/** Outcome of applying a customer action to one item. */
export type Transition =
  | { kind: "change"; to: ItemStatus }
  | { kind: "noop" }
  | { kind: "refused" };

/** What the machine needs to know about an item. */
export interface ItemState {
  /** Current status. */
  status: ItemStatus;
  /** Status before the pending request (null when nothing is pending). */
  statusBefore: ItemStatus | null;
  /** Action whose cancel was the item's latest change (null otherwise). */
  lastCancelled: ItemAction | null;
}

/**
 * Filing `action` on an item: a change, a no-op when that very request is already pending
 * (idempotent repeat), or refused.
 *
 * @example
 * ```ts
 * import { requestTransition } from "./lifecycle.ts";
 * const state = { status: "received", statusBefore: null, lastCancelled: null } as const;
 * console.log(requestTransition(state, "open")); // { kind: "change", to: "open_requested" }
 * ```
 */
export function requestTransition(item: ItemState, action: ItemAction): Transition {
  const shape = REQUESTS[action];
  if (item.status === shape.pending) return { kind: "noop" };
  if (shape.from.includes(item.status)) return { kind: "change", to: shape.pending };
  return { kind: "refused" };
}

/**
 * Cancelling `action`: back to the state before the request while it is pending, a no-op when
 * the same cancel was the item's latest change, refused otherwise.
 *
 * @example
 * ```ts
 * import { cancelTransition } from "./lifecycle.ts";
 * const state = { status: "open_requested", statusBefore: "received", lastCancelled: null } as const;
 * console.log(cancelTransition(state, "open")); // { kind: "change", to: "received" }
 * ```
 */
export function cancelTransition(item: ItemState, action: ItemAction): Transition {
  if (item.status === REQUESTS[action].pending && item.statusBefore) {
    return { kind: "change", to: item.statusBefore };
  }
  if (item.lastCancelled === action) return { kind: "noop" };
  return { kind: "refused" };
}

/**
 * The states in which `action` (or its cancel) may be filed: what an error names as the next
 * step.
 *
 * @example
 * ```ts
 * import { allowedStates } from "./lifecycle.ts";
 * console.log(allowedStates("shred", false)); // ["received", "opened"]
 * ```
 */
export function allowedStates(action: ItemAction, cancel: boolean): readonly ItemStatus[] {
  return cancel ? [REQUESTS[action].pending] : REQUESTS[action].from;
}

/**
 * The action pending on an item in `status`, or null.
 *
 * @example
 * ```ts
 * import { pendingAction } from "./lifecycle.ts";
 * console.log(pendingAction("shred_requested")); // "shred"
 * ```
 */
export function pendingAction(status: ItemStatus): ItemAction | null {
  for (const action of ITEM_ACTIONS) {
    if (REQUESTS[action].pending === status) return action;
  }
  return null;
}

/**
 * The state a pending request leads to once the mailroom completes it, or null when nothing is
 * pending.
 *
 * @example
 * ```ts
 * import { completedStatus } from "./lifecycle.ts";
 * console.log(completedStatus("rescan_requested")); // "opened"
 * ```
 */
export function completedStatus(status: ItemStatus): ItemStatus | null {
  const action = pendingAction(status);
  return action ? REQUESTS[action].done : null;
}

/**
 * True for the final states (`shredded`, `discarded`).
 *
 * @example
 * ```ts
 * import { isFinal } from "./lifecycle.ts";
 * console.log(isFinal("shredded")); // true
 * ```
 */
export function isFinal(status: ItemStatus): boolean {
  return status === "shredded" || status === "discarded";
}

/**
 * The folder an item shows in: `Inbox` until opened, `Scanned` once a scan exists, then
 * `Shredded` or `Discarded`.
 *
 * @example
 * ```ts
 * import { folderOf } from "./lifecycle.ts";
 * console.log(folderOf("rescan_requested", true)); // "Scanned"
 * ```
 */
export function folderOf(status: ItemStatus, hasScan: boolean): string {
  if (status === "shredded") return "Shredded";
  if (status === "discarded") return "Discarded";
  return hasScan ? "Scanned" : "Inbox";
}
