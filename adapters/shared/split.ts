/**
 * Splits a reply into platform-sized messages (the limit is the platform's: 2000 on Discord, 4000 on Slack):
 * on line boundaries where it can, at a space when a line must be cut, never inside a user-perceived character
 * (surrogate pairs, emoji with skin tones or joiners, flags, accented letters), and with a code fence that is open
 * at a cut closed at the end of one chunk and reopened (same opening line) at the start of the next, so every
 * chunk renders on its own. Joining the chunks with the cut newlines gives the text back, fences aside.
 */
import { closesFence, fenceMarker } from '../../src/room/text/code-spans.js';

interface Fence {
  /** The marker run, e.g. "```" or "~~~~". */
  readonly marker: string;
  /** The whole opening line, e.g. "```ts", reused to reopen the block. */
  readonly opener: string;
}

/** The fence state after `line`, given the state before it. */
function fenceAfter(line: string, open: Fence | null): Fence | null {
  const marker = fenceMarker(line);
  if (!marker) return open;
  if (!open) return { marker, opener: line.trimEnd() };
  return closesFence(line, open.marker) ? null : open;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** Context read around a cut: far longer than any real emoji sequence or accented letter. */
const CONTEXT = 64;

/** Below U+0300 (combining marks start there) two neighbours never belong to one character, bar CR LF. */
const plain = (code: number) => code < 0x300;

/** The last place at or before `at`, after `floor`, that separates two user-perceived characters. */
function characterCut(line: string, at: number, floor: number): number | undefined {
  const before = line.charCodeAt(at - 1);
  const after = line.charCodeAt(at);
  if (plain(before) && plain(after) && !(before === 13 && after === 10)) return at;
  // Only a window around the cut is segmented, so a long line costs no more than a short one.
  const from = Math.max(floor, at - CONTEXT);
  let best: number | undefined;
  for (const { index } of graphemes.segment(line.slice(from, at + CONTEXT))) {
    const offset = from + index;
    if (offset > at) break;
    if (offset > floor) best = offset;
  }
  return best;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Cuts an overlong line into pieces of at most `size`, preferring the last space in each window. */
function cutLine(line: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (line.length - start > size) {
    const end = start + size;
    const space = line.lastIndexOf(' ', end);
    // A space in the second half of the window makes a readable cut; else a hard cut.
    let cut = space - start >= size / 2 ? space : end;
    const whole = characterCut(line, cut, start);
    if (whole !== undefined) {
      cut = whole;
    } else if (isHighSurrogate(line.charCodeAt(cut - 1))) {
      // One character longer than the window (a long emoji sequence): at least keep its code points whole.
      cut -= 1;
    }
    if (cut <= start) cut = Math.min(start + 2, line.length); // a window of 1 cannot hold a pair: keep it whole
    pieces.push(line.slice(start, cut));
    start = cut;
  }
  pieces.push(line.slice(start));
  return pieces;
}

/** The chunks of `text`, each at most `limit` characters (UTF-16 units, as the platforms count). */
export function splitMessage(text: string, limit: number): string[] {
  if (text.length <= limit) return text.trim() ? [text] : [];
  const chunks: string[] = [];
  let current = '';
  // Widened on purpose: the helpers below change it, which control-flow narrowing cannot see.
  let fence: Fence | null = null as Fence | null;

  const closing = (open: Fence | null) => (open ? `\n${open.marker}` : '');
  const flush = () => {
    if (current.trim() && current !== fence?.opener) chunks.push(current + closing(fence));
    current = fence ? fence.opener : '';
  };
  const append = (piece: string, after: Fence | null) => {
    current = current === '' ? piece : `${current}\n${piece}`;
    fence = after;
  };

  for (const line of text.split('\n')) {
    const after = fenceAfter(line, fence);
    const joined = current === '' ? line.length : current.length + 1 + line.length;
    if (joined + closing(after).length <= limit) {
      append(line, after);
      continue;
    }
    flush();
    const fresh = current === '' ? line.length : current.length + 1 + line.length;
    if (fresh + closing(after).length <= limit) {
      append(line, after);
      continue;
    }
    // Longer than a whole message: cut it, keeping room for the reopened and closing fence.
    const room = limit - (current === '' ? 0 : current.length + 1) - closing(fence ?? after).length;
    if (room < 1) throw new Error(`cannot split: a limit of ${limit} leaves no room beside the fence lines`);
    const pieces = cutLine(line, room);
    for (const [index, piece] of pieces.entries()) {
      const last = index === pieces.length - 1;
      append(piece, last ? after : fence);
      if (!last) flush();
    }
  }
  if (current.trim() && current !== fence?.opener) chunks.push(current + closing(fence));
  return chunks;
}
