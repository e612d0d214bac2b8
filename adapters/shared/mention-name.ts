/**
 * A display name as the core's `@name` token: whitespace becomes `_`, so `@Alice_Smith` stays one word that the
 * router's mention rule can read and the adapter can turn back into a platform mention.
 */
export function mentionName(displayName: string): string {
  return displayName.trim().replace(/\s+/g, '_');
}
