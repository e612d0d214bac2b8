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

/**
 * A person's `@name` where agents are seated too: a human (or a foreign bot, heard as one) whose display name reads
 * as an agent's, in any case, is shown and mentioned as `<name>_human` (`_human2`, … should that be an agent's as
 * well), so that a human and an agent never share a speaker line, and a mention of the human never wakes the agent.
 */
export function personName(displayName: string, isAgentName: (name: string) => boolean): string {
  const name = mentionName(displayName);
  if (!name || !isAgentName(name)) return name;
  for (let n = 1; ; n++) {
    const candidate = `${name}_human${n === 1 ? '' : n}`;
    if (!isAgentName(candidate)) return candidate;
  }
}
