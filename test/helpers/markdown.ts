/**
 * Just enough Markdown reading for the documentation tests: the headings a page can be linked to and the
 * links it makes, both outside fenced code blocks and inline code.
 */

/** One link in a page: its text, its target and the 1-based line it is on. */
export interface MarkdownLink {
  text: string;
  target: string;
  line: number;
}

/** The lines of a page that are prose, each with its 1-based number; fenced code blocks are left out. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const lines: Array<{ text: string; line: number }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/** Inline code spans (`x`, ``x``) hold no links and no formatting. */
const withoutCodeSpans = (text: string) => text.replace(/(`+)(?:(?!\1).)+?\1/g, '');

/**
 * The anchor GitHub gives a heading: its text as rendered (code spans and link texts kept, the markup gone),
 * lower-cased, every character that is not a letter, digit, mark, space, `-` or `_` removed, spaces turned into `-`.
 */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the page's headings make; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every inline link and image in the page's prose. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    for (const match of withoutCodeSpans(text).matchAll(/!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ text: match[1] ?? '', target: match[2] ?? '', line });
    }
  }
  return links;
}

/** A link that leaves the repository (http:, https:, mailto:, …) rather than pointing at a file in it. */
export const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);
