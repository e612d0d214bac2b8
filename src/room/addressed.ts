/**
 * Who a message addresses: its `@name` mentions, then the agents the platform says it addresses beyond its text
 * (a human's reply to an agent's message). Canonical names, configured agents only, each once, never the author.
 */
export function withAddressed(
  mentions: readonly string[],
  addressed: readonly string[] | undefined,
  known: readonly string[],
  self?: string,
): string[] {
  if (!addressed || addressed.length === 0) return [...mentions];
  const byKey = new Map(known.map((name) => [name.toLowerCase(), name]));
  const out = [...mentions];
  const seen = new Set(out.map((name) => name.toLowerCase()));
  for (const name of addressed) {
    const key = name.toLowerCase();
    const canonical = byKey.get(key);
    if (!canonical || seen.has(key) || key === self?.toLowerCase()) continue;
    seen.add(key);
    out.push(canonical);
  }
  return out;
}
