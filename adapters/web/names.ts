/**
 * A person's name in the web room: it is how the room knows them (`@name`), so it must read as one mention and
 * never be taken for an agent or for the room's own words.
 */

/** Letters of any script, digits, `_`, `-` and inner dots, as a mention reads them; at most 32 characters. */
const PERSON_NAME = /^[\p{L}\p{N}_](?:[\p{L}\p{N}\p{M}_.-]{0,30}[\p{L}\p{N}\p{M}_])?$/u;

/** Words the room itself uses for its speakers. */
const RESERVED = ['human', 'system'];

/** Why `name` cannot be a person's name in the web room, or undefined when it can. */
export function personNameProblem(name: string, agents: readonly string[]): string | undefined {
  if (!PERSON_NAME.test(name)) {
    return `"${name}" is not a name: use letters, digits, _, - and inner dots (at most 32 characters)`;
  }
  const lower = name.toLowerCase();
  if (RESERVED.includes(lower)) return `"${name}" is a word the room uses for its speakers; pick another name`;
  const agent = agents.find((a) => a.toLowerCase() === lower);
  if (agent) return `"${name}" is the name of the agent @${agent}; pick another name`;
  return undefined;
}
