/**
 * Shared and forwarded messages (a Slack share, a Discord forward) as the agents read them: the sharer's own words,
 * then each shared text as a Markdown quote. Mentions inside a quote are someone else's words: they lose their `@`
 * so they address no one (the sharer addresses agents in their own words).
 */
import { mapProse } from '../../src/room/text/code-spans.js';

export interface SharedText {
  /** Who wrote the shared message, when the platform says. */
  readonly author?: string | undefined;
  /** Its text, already in the core's plain form (`@name` mentions). */
  readonly text: string;
}

/** `@name` shaped like the router's mentions (not after a word character, `.`, `@`, `+` or `-`). */
const MENTION = /(^|[^\p{L}\p{N}_.@+-])@(?=[\p{L}\p{N}_])/gu;

export function withShared(comment: string, shared: readonly SharedText[]): string {
  const quotes = shared
    .map(({ author, text }) => {
      const body = mapProse(text.trim(), (prose) => prose.replace(MENTION, '$1'));
      if (!body) return '';
      return `${author ? `${author}: ` : ''}${body}`
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    })
    .filter((quote) => quote !== '');
  return [comment.trim(), ...quotes].filter((part) => part !== '').join('\n');
}
