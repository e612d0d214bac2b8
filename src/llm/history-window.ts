/**
 * Where a room's history starts in an agent's context. A provider's prompt cache reuses the longest prefix a
 * request shares with an earlier one, so the start must not slide one message per call: it only moves by whole
 * blocks, and it is a pure function of the history (no memory between calls), so every turn finds the same one.
 *
 * Blocks are cut at message ids: a message starts a block of width w when its id falls in another w-wide id range
 * than the message before it. Ids only grow, so a block boundary, once seen, stays one.
 */

export interface WindowItem {
  readonly id: number;
  /** What the message costs in the request, as counted. */
  readonly tokens: number;
}

export interface WindowLimits {
  /** HISTORY_LIMIT: at most this many messages. */
  readonly maxMessages: number;
  /** The history's token share. */
  readonly maxTokens: number;
}

/** The widest block: half the message limit, so a cut drops about the oldest half. */
export function widestBlock(maxMessages: number): number {
  return Math.max(1, Math.floor(maxMessages / 2));
}

function startsBlock(items: readonly WindowItem[], index: number, width: number): boolean {
  if (index === 0) return true;
  const id = items[index]?.id ?? 0;
  const before = items[index - 1]?.id ?? 0;
  return Math.floor(id / width) !== Math.floor(before / width);
}

/**
 * How many messages ending at `last` (inclusive, walking back) fit the limits. Running out of messages before the
 * token share is full means the tokens do not bind: the message limit does (the window passed in is only a part of
 * the room).
 */
function fittingBefore(items: readonly WindowItem[], last: number, limits: WindowLimits): number {
  let tokens = 0;
  for (let i = last, count = 0; i >= 0 && count < limits.maxMessages; i--, count++) {
    tokens += items[i]?.tokens ?? 0;
    if (tokens > limits.maxTokens) return count;
  }
  return limits.maxMessages;
}

/**
 * The index of the first message to keep (oldest first in `items`). Everything when it all fits; else the
 * earliest block boundary whose suffix fits. The block width follows how many messages fit (about half of them
 * per block, so a cut drops about half); it is measured on the messages before the newest widest-block boundary,
 * which no longer change, so the width itself changes at most once per widest block. The newest message is
 * always kept.
 */
export function historyStart(items: readonly WindowItem[], limits: WindowLimits): number {
  const count = items.length;
  if (count === 0) return 0;
  const suffix = new Array<number>(count + 1).fill(0);
  for (let i = count - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + (items[i]?.tokens ?? 0);
  const fits = (start: number) => count - start <= limits.maxMessages && (suffix[start] ?? 0) <= limits.maxTokens;
  if (fits(0)) return 0;

  const widest = widestBlock(limits.maxMessages);
  let anchor = 0;
  for (let i = count - 1; i > 0; i--) {
    if (startsBlock(items, i, widest)) {
      anchor = i;
      break;
    }
  }
  const fitting = anchor > 0 ? fittingBefore(items, anchor - 1, limits) : fittingBefore(items, count - 1, limits);
  let width = widest;
  while (width > 1 && width * 2 > fitting) width = Math.ceil(width / 2);

  for (;;) {
    for (let i = 0; i < count; i++) if (startsBlock(items, i, width) && fits(i)) return i;
    if (width === 1) return count - 1;
    width = Math.ceil(width / 2);
  }
}
