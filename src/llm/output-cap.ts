import type { TokenCounter } from './tokens.js';

/** How much text may wait before it is counted into the total (counting each small delta alone overcounts). */
const PENDING_CHARS = 1000;

/**
 * An answer's output cap, held as the answer arrives: every piece the model writes (text, reasoning, a refusal, tool
 * calls) is counted with the real tokenizer, and the piece that would pass the cap is cut to what fits. A server
 * that ignores `max_tokens` is read no further than the cap, so a call never costs more than its hold.
 */
export class OutputCap {
  /** Everything admitted so far, as one text (for a recount near the cap). */
  private written = '';
  /** Tokens of `written` up to `pending`, counted in blocks (their sum runs a little over the exact count). */
  private counted = 0;
  private pending = '';
  /** True once a piece did not fit: the answer was cut here, and nothing more is taken. */
  cut = false;

  constructor(
    readonly tokens: number,
    private readonly counter: TokenCounter,
  ) {}

  /** The part of `piece` that fits under the cap (all of it, or its start; nothing once the cap was reached). */
  admit(piece: string): string {
    if (this.cut || !piece) return '';
    // A token is at least one byte: far from the cap, nothing needs counting yet.
    const pending = this.pending + piece;
    if (
      this.counted + Buffer.byteLength(pending) <= this.tokens ||
      this.counted + this.counter.count(pending) <= this.tokens
    ) {
      this.append(piece);
      return piece;
    }
    // Counted in blocks the total runs a little high: near the cap, the whole text is counted exactly.
    const exact = this.counter.count(this.written + piece);
    if (exact <= this.tokens) {
      this.written += piece;
      this.counted = exact;
      this.pending = '';
      return piece;
    }
    this.cut = true;
    // The longest start of the piece that fits (the count grows with the length).
    let low = 0;
    let high = piece.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (this.counter.count(this.written + piece.slice(0, mid)) <= this.tokens) low = mid;
      else high = mid - 1;
    }
    // Never split a surrogate pair.
    const code = piece.charCodeAt(low - 1);
    const kept = piece.slice(0, code >= 0xd800 && code <= 0xdbff ? low - 1 : low);
    this.written += kept;
    return kept;
  }

  private append(piece: string): void {
    this.written += piece;
    this.pending += piece;
    if (this.pending.length >= PENDING_CHARS) {
      this.counted += this.counter.count(this.pending);
      this.pending = '';
    }
  }
}
