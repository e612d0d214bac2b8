/**
 * Splits a reply into Discord-sized messages (2000 characters each): on line boundaries where it can, never
 * inside a surrogate pair, and with a code fence that is open at a cut closed at the end of one chunk and
 * reopened (same info string) at the start of the next, so every chunk renders on its own.
 */

export const DISCORD_MESSAGE_LIMIT = 2000;

const FENCE = /^\s*(`{3,}|~{3,})/;

interface Fence {
  /** The marker run, e.g. "```" or "~~~~". */
  readonly marker: string;
  /** The whole opening line, e.g. "```ts", reused to reopen the block. */
  readonly opener: string;
}

/** The fence state after `line`, given the state before it. */
function fenceAfter(line: string, open: Fence | null): Fence | null {
  const match = FENCE.exec(line);
  if (!match?.[1]) return open;
  const run = match[1];
  if (!open) return { marker: run, opener: line.trim() };
  const closes = run[0] === open.marker[0] && run.length >= open.marker.length && line.trim() === run;
  return closes ? null : open;
}

/** The largest cut at or before `index` that does not separate a high surrogate from its low surrogate. */
function safeCut(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  const before = text.charCodeAt(index - 1);
  return before >= 0xd800 && before <= 0xdbff ? index - 1 : index;
}

/** Cuts an overlong line into pieces of at most `size`, preferring the last space in each window. */
function cutLine(line: string, size: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > size) {
    let cut = rest.lastIndexOf(' ', size);
    if (cut < size / 2) cut = size; // no useful space: a hard cut
    cut = safeCut(rest, cut);
    if (cut <= 0) cut = Math.min(2, rest.length); // a size of 1 cannot hold a pair; keep it whole
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  pieces.push(rest);
  return pieces;
}

export function splitMessage(text: string, limit = DISCORD_MESSAGE_LIMIT): string[] {
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
    const pieces = cutLine(line, Math.max(room, 1));
    for (const [index, piece] of pieces.entries()) {
      const last = index === pieces.length - 1;
      append(piece, last ? after : fence);
      if (!last) flush();
    }
  }
  if (current.trim() && current !== fence?.opener) chunks.push(current + closing(fence));
  return chunks;
}
