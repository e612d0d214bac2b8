/**
 * Markdown's code, found once for every adapter: fenced blocks (``` or ~~~, up to three spaces of indent) and
 * inline code spans. Conversions (mentions, formatting) touch prose only, and the splitter keeps fences whole.
 */

/** A piece of text: prose, a fenced code block (fence lines included) or an inline code span. */
export interface Segment {
  readonly kind: 'text' | 'fence' | 'code';
  readonly value: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The marker run (e.g. "```" or "~~~~") when `line` opens a fence, else undefined. */
export function fenceMarker(line: string): string | undefined {
  return FENCE.exec(line)?.[1];
}

/** Whether `line` closes a fence opened with `marker`: the same character, at least as long, nothing after. */
export function closesFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= marker.length && /^(`+|~+)$/.test(trimmed) && trimmed[0] === marker[0];
}

/**
 * Splits Markdown into prose and code. Joining the values gives the input back. An unclosed fence runs to the
 * end, as Markdown renders it.
 */
export function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let prose = '';
  let fence: string | null = null;
  let marker = '';
  for (const line of text.split(/(?<=\n)/)) {
    if (fence === null) {
      const opening = fenceMarker(line);
      if (opening) {
        out.push(...inlineSegments(prose));
        prose = '';
        fence = line;
        marker = opening;
      } else {
        prose += line;
      }
    } else {
      fence += line;
      if (closesFence(line, marker)) {
        out.push({ kind: 'fence', value: fence });
        fence = null;
      }
    }
  }
  if (fence !== null) out.push({ kind: 'fence', value: fence });
  out.push(...inlineSegments(prose));
  return out;
}

/** Applies `convert` to the prose of `text` only; code keeps every character. */
export function mapProse(text: string, convert: (prose: string) => string): string {
  return segments(text)
    .map((segment) => (segment.kind === 'text' ? convert(segment.value) : segment.value))
    .join('');
}

/** Inline code spans (`code`, ``co`de``) inside one prose run. */
function inlineSegments(text: string): Segment[] {
  const out: Segment[] = [];
  const pattern = /(`+)(?!`)([^\n]*?[^`\n])\1(?!`)/g;
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index ?? 0;
    if (start > at) out.push({ kind: 'text', value: text.slice(at, start) });
    out.push({ kind: 'code', value: match[0] });
    at = start + match[0].length;
  }
  if (at < text.length) out.push({ kind: 'text', value: text.slice(at) });
  return out;
}

/** The text with code removed: fenced blocks vanish, inline spans become one space (words stay apart). */
export function stripCode(text: string): string {
  return segments(text)
    .map((segment) => (segment.kind === 'text' ? segment.value : segment.kind === 'code' ? ' ' : '\n'))
    .join('');
}

/** The contents of the inline code spans of `text` (without their backticks), in order. */
export function inlineCode(text: string): string[] {
  return segments(text)
    .filter((segment) => segment.kind === 'code')
    .map((segment) => segment.value.replace(/^(`+)\s?([\s\S]*?)\s?\1$/, '$2'));
}

/** Whether `text` holds a fenced code block. */
export function hasFence(text: string): boolean {
  return segments(text).some((segment) => segment.kind === 'fence');
}

/** The text without quoted lines (Markdown `>`): someone else's words, quoted, address no one. */
export function stripQuotes(text: string): string {
  return text
    .split('\n')
    .map((line) => (/^ {0,3}>/.test(line) ? '' : line))
    .join('\n');
}
