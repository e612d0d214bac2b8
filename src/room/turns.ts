/** The bridge's line when the turn limit hands control back (rule 4.1). */
export function handBackText(limit: number): string {
  return `@human ${limit} agent messages in a row: the agents stop here and control is back with you. Mention an agent to continue.`;
}
