/**
 * Mentions are `@name`, case-insensitive, names only. Ignored: `@@x`, a bare `@`, unknown names,
 * the speaker's own name, e-mail addresses, anything inside code blocks or inline code, and quoted lines
 * (`> @eps wrote: …` is someone else's words, not an address). Names are letters of any script, digits, `_`,
 * `-` and inner dots (`@José`, `@jane.doe`).
 */
import { stripCode, stripQuotes } from './code-spans.js';

const NAME = /[\p{L}\p{N}_][\p{L}\p{N}\p{M}_.-]*/uy;
/** A character that makes a following `@` part of a word or address, not a mention. */
const WORD_BEFORE = /[\p{L}\p{N}\p{M}_.@+-]/u;

/** Every `@token` that is shaped like a mention, in order, outside code. */
export function mentionTokens(text: string): string[] {
  const plain = stripQuotes(stripCode(text));
  const tokens: string[] = [];
  for (let i = 0; i < plain.length; i++) {
    if (plain[i] !== '@') continue;
    const before = i > 0 ? plain[i - 1] : '';
    // `a@b` is an address, `@@x` is not a mention, `x.@y` / `x-@y` neither.
    if (before && WORD_BEFORE.test(before)) continue;
    NAME.lastIndex = i + 1;
    const match = NAME.exec(plain);
    if (!match) continue;
    // Sentence punctuation after a name is not part of it: "ask @code." / "@data-".
    const name = match[0].replace(/[.-]+$/, '');
    if (name) tokens.push(name);
    i += match[0].length;
  }
  return tokens;
}

/** Lower-cased name -> configured spelling, made once per list of names. */
const spellingsOf = new WeakMap<readonly string[], ReadonlyMap<string, string>>();
function spellings(known: readonly string[]): ReadonlyMap<string, string> {
  let map = spellingsOf.get(known);
  if (!map) {
    map = new Map(known.map((name) => [name.toLowerCase(), name]));
    spellingsOf.set(known, map);
  }
  return map;
}

/**
 * The names of `known` that `text` mentions, in their configured spelling, first mention first,
 * without duplicates and without `self`.
 */
export function extractMentions(text: string, known: readonly string[], self?: string): string[] {
  // Most texts mention nobody: no `@`, no work.
  if (!text.includes('@') || known.length === 0) return [];
  const byKey = spellings(known);
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
