/**
 * Mentions are `@name`, case-insensitive, names only. Ignored: `@@x`, a bare `@`, unknown names,
 * the speaker's own name, e-mail addresses, and anything inside code blocks or inline code.
 */

// Letters of any script and digits, as agent names allow (and the adapters' mention conversion).
const NAME = /[\p{L}\p{N}_-]+/uy;

/** Removes fenced code blocks (an unclosed fence runs to the end) and inline code spans. */
export function stripCode(text: string): string {
  const withoutFences = text.replace(/(^|\n)[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:\n[ \t]*\2[ \t]*(?=\n|$)|$)/g, '$1');
  return withoutFences.replace(/(`+)[\s\S]*?\1/g, ' ');
}

/** Every `@token` that is shaped like a mention, in order, outside code. */
export function mentionTokens(text: string): string[] {
  const plain = stripCode(text);
  const tokens: string[] = [];
  for (let i = 0; i < plain.length; i++) {
    if (plain[i] !== '@') continue;
    const before = i > 0 ? plain[i - 1] : '';
    // `a@b` is an address, `@@x` is not a mention, `x.@y` / `x-@y` neither.
    if (before && /[\p{L}\p{N}_.@+-]/u.test(before)) continue;
    NAME.lastIndex = i + 1;
    const match = NAME.exec(plain);
    if (!match) continue;
    const name = match[0].replace(/-+$/, '');
    if (name) tokens.push(name);
    i += match[0].length;
  }
  return tokens;
}

/**
 * The names of `known` that `text` mentions, in their configured spelling, first mention first,
 * without duplicates and without `self`.
 */
export function extractMentions(text: string, known: readonly string[], self?: string): string[] {
  const byKey = new Map(known.map((name) => [name.toLowerCase(), name]));
  const selfKey = self?.toLowerCase();
  const found: string[] = [];
  for (const token of mentionTokens(text)) {
    const key = token.toLowerCase();
    const name = byKey.get(key);
    if (!name || key === selfKey || found.includes(name)) continue;
    found.push(name);
  }
  return found;
}
