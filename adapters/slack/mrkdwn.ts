import { segments } from '../../src/room/text/code-spans.js';

/** Turns a mention's name into Slack's `<@U…>`, or undefined to leave `@name` as it is. */
export type MentionResolver = (name: string) => string | undefined;

/** Slack requires these three escaped everywhere except in its own `<…>` markup. */
export function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

// Placeholders keep finished markup (links, mentions, bold) away from later rules.
const HOLD = '\u0000';
const BOLD = '\u0001';

/**
 * Converts an agent's Markdown reply into Slack mrkdwn: **bold** → *bold*, *italic* → _italic_,
 * ~~strike~~ → ~strike~, [text](url) → <url|text>, # headings → bold lines, list bullets → •,
 * fenced code without the language tag, and `@name` → `<@U…>` where `mention` knows the name.
 * Code (fenced and inline) keeps its characters; only Slack's three escapes apply there.
 */
export function markdownToMrkdwn(markdown: string, mention: MentionResolver = () => undefined): string {
  return segments(markdown)
    .map((segment) => {
      if (segment.kind === 'code') return escapeSlack(segment.value);
      if (segment.kind === 'fence') return fenceToSlack(segment.value);
      return proseToSlack(segment.value, mention);
    })
    .join('');
}

/** Slack shows a fence's language tag as code text, so drop it; `~~~` fences become backticks. */
function fenceToSlack(fence: string): string {
  const tail = fence.endsWith('\n') ? '\n' : '';
  const lines = (tail ? fence.slice(0, -1) : fence).split('\n');
  const closed = lines.length > 1 && /^\s*(`{3,}|~{3,})\s*$/.test(lines[lines.length - 1] ?? '');
  const inner = lines.slice(1, closed ? -1 : undefined);
  return `\`\`\`\n${escapeSlack(inner.join('\n'))}${inner.length > 0 ? '\n' : ''}\`\`\`${tail}`;
}

function proseToSlack(text: string, mention: MentionResolver): string {
  const held: string[] = [];
  const hold = (markup: string) => `${HOLD}${held.push(markup) - 1}${HOLD}`;

  let out = text
    // [text](url) and <https://…> autolinks become Slack links.
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g, (_m, label: string, url: string) =>
      hold(`<${escapeSlack(url)}|${escapeSlack(label)}>`),
    )
    .replace(/<((?:https?:\/\/|mailto:)[^\s>]+)>/g, (_m, url: string) => hold(`<${escapeSlack(url)}>`))
    // Bare URLs: keep their characters out of the formatting rules.
    .replace(/\bhttps?:\/\/[^\s<>]+[^\s<>.,;:!?)'"]/g, (url) => hold(escapeSlack(url)));

  // Escape, but keep a line-leading ">" as a block quote.
  out = out
    .split('\n')
    .map((line) => {
      const quote = /^((?:\s*>)+ ?)(.*)$/.exec(line);
      return quote ? `${quote[1]}${escapeSlack(quote[2] ?? '')}` : escapeSlack(line);
    })
    .join('\n');

  out = out
    .replace(
      /^(\s{0,3})#{1,6}\s+(.+?)\s*#*\s*$/gm,
      (_m, indent: string, title: string) => `${indent}${BOLD}${title}${BOLD}`,
    )
    .replace(/^(\s*)[-*+]\s+(?=\S)/gm, '$1• ')
    .replace(/\*\*(?!\s)([^\n]+?)(?<!\s)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w])__(?!\s)([^\n]+?)(?<!\s)__(?!\w)/g, `$1${BOLD}$2${BOLD}`)
    .replace(/(^|[^*\w])\*(?![\s*])([^*\n]+?)(?<![\s*])\*(?![*\w])/g, '$1_$2_')
    .replace(/~~(?!\s)([^\n]+?)(?<!\s)~~/g, '~$1~')
    .replace(/(^|[^\p{L}\p{N}_.@-])@([\p{L}\p{N}_.-]+)/gu, (whole, before: string, name: string) => {
      const trimmed = name.replace(/[.-]+$/, '');
      const id = mention(name) ?? (trimmed !== name ? mention(trimmed) : undefined);
      if (!id) return whole;
      const used = mention(name) ? name : trimmed;
      return `${before}${hold(`<@${id}>`)}${name.slice(used.length)}`;
    })
    .replaceAll(BOLD, '*');

  return out.replace(new RegExp(`${HOLD}(\\d+)${HOLD}`, 'g'), (_m, index: string) => held[Number(index)] ?? '');
}
