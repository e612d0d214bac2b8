/** Slack truncates the display of longer texts; its guidance is to keep a message under 4000 characters. */
export const SLACK_MESSAGE_LIMIT = 4000;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

interface FenceState {
  /** The line that opened the fence we are inside (reopened at the top of the next chunk). */
  readonly opening: string;
  /** The characters that close it. */
  readonly marker: string;
}

/** The fence state after `line`, given the state before it. */
function advance(state: FenceState | null, line: string): FenceState | null {
  const fence = FENCE.exec(line)?.[1];
  if (!fence) return state;
  if (state === null) return { opening: line, marker: fence };
  const trimmed = line.trim();
  const closes = /^(`+|~+)$/.test(trimmed) && trimmed[0] === state.marker[0] && trimmed.length >= state.marker.length;
  return closes ? null : state;
}

/**
 * Splits a long message into chunks of at most `limit` characters at line boundaries
 * (a single over-long line is cut). A code fence open at a cut is closed at the end of
 * the chunk and reopened with the same opening line at the start of the next, so every
 * chunk renders on its own.
 */
export function splitMessage(text: string, limit = SLACK_MESSAGE_LIMIT): string[] {
  if (text.length <= limit) return text.trim() ? [text] : [];
  const chunks: string[] = [];
  let state: FenceState | null = null;
  let lines: string[] = [];
  let length = 0; // of lines.join('\n')
  let header = 0; // how many lines at the top are a reopened fence

  const start = () => {
    lines = state ? [state.opening] : [];
    length = state ? state.opening.length : 0;
    header = lines.length;
  };
  const emit = () => {
    if (lines.length > header) {
      const body = lines.join('\n').replace(/\s+$/, '');
      if (body) chunks.push(state ? `${body}\n${state.marker}` : body);
    }
    start();
  };
  const push = (line: string) => {
    length += (lines.length > 0 ? 1 : 0) + line.length;
    lines.push(line);
  };
  const reserve = (after: FenceState | null) => (after ? after.marker.length + 1 : 0);

  for (const original of text.split('\n')) {
    let line = original;
    const after = advance(state, line);
    if (length + (lines.length > 0 ? 1 : 0) + line.length + reserve(after) > limit && lines.length > header) emit();
    // Still too long on a fresh chunk: cut the line into pieces that fit.
    while (length + (lines.length > 0 ? 1 : 0) + line.length + reserve(state) > limit) {
      const take = limit - length - (lines.length > 0 ? 1 : 0) - reserve(state);
      if (take <= 0) throw new Error(`cannot split: limit ${limit} is smaller than a fence line`);
      push(line.slice(0, take));
      line = line.slice(take);
      emit();
    }
    push(line);
    state = after;
  }
  emit();
  return chunks;
}
