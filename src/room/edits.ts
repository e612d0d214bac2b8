/**
 * Edits that address someone new. An edit made soon after a message (EDIT_WAKE_MINUTES) that adds a mention of an
 * agent wakes that agent, once: agents the message (or an earlier edit of it) already addressed are not asked
 * again, and an edit that adds no one is no new message at all.
 */

export interface EditCheck {
  /** The agents the edited message addresses now (canonical names). */
  readonly addressing: readonly string[];
  /** The agents the original message and its earlier edits addressed. */
  readonly addressedBefore: readonly string[];
  /** When the original message was posted, and when the edit was made (ms). */
  readonly originalAt: number;
  readonly editedAt: number;
  /** How long after the original an edit may still wake someone (ms); 0: never. */
  readonly windowMs: number;
}

/** The agents an edit newly addresses, in its order; empty when it is outside the window or adds no one. */
export function newlyAddressed(check: EditCheck): string[] {
  const elapsed = check.editedAt - check.originalAt;
  if (check.windowMs <= 0 || elapsed > check.windowMs) return [];
  const before = new Set(check.addressedBefore.map((name) => name.toLowerCase()));
  const fresh: string[] = [];
  for (const name of check.addressing) {
    const key = name.toLowerCase();
    if (before.has(key)) continue;
    before.add(key);
    fresh.push(name);
  }
  return fresh;
}
