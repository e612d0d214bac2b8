/**
 * A display name as the core's `@name` token: whitespace becomes `_`, so `@Alice_Smith` stays one word that the
 * router's mention rule can read and the adapter can turn back into a platform mention. Control and invisible format
 * characters go: a bidi override would show the name reversed, and a name nobody can type cannot be mentioned.
 */
export function mentionName(displayName: string): string {
  return displayName
    .replace(/\p{Cf}/gu, '')
    .replace(/\p{Cc}/gu, ' ')
    .trim()
    .replace(/\s+/g, '_');
}
