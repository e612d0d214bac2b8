import { StringDecoder } from 'node:string_decoder';

/** Output longer than this is cut (issue 3: first 5000 + last 2000 characters of anything over 10000). */
export const OUTPUT_LIMIT = 10_000;
export const OUTPUT_HEAD = 5_000;
export const OUTPUT_TAIL = 2_000;
export const TRUNCATION_MARKER = '\n... [truncated] ...\n';

/**
 * Collects a command's output with bounded memory: it keeps the first OUTPUT_LIMIT characters
 * and a rolling tail, and only counts the rest, so a command printing a gigabyte costs a few KB.
 */
export class OutputBuffer {
  private decoder = new StringDecoder('utf8');
  private head = '';
  private tail = '';
  private total = 0;
  private skipped = false;

  /** Characters seen so far, including the discarded middle. */
  get length(): number {
    return this.total;
  }

  write(chunk: Buffer | string): void {
    this.append(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  /**
   * The source dropped bytes here (the command runner forwards only a head and a tail): what
   * follows is the tail, decoded afresh. The runner's head is long enough that a gap always
   * means the output is over the limit.
   */
  skip(): void {
    this.append(this.decoder.end());
    this.decoder = new StringDecoder('utf8');
    this.tail = '';
    this.skipped = true;
  }

  /** The output by the truncation rule; flushes a trailing partial UTF-8 sequence. */
  text(): string {
    this.append(this.decoder.end());
    if (this.total <= OUTPUT_LIMIT && !this.skipped) return this.head;
    return this.head.slice(0, OUTPUT_HEAD) + TRUNCATION_MARKER + this.tail.slice(-OUTPUT_TAIL);
  }

  private append(text: string): void {
    if (!text) return;
    this.total += text.length;
    if (this.head.length < OUTPUT_LIMIT) this.head += text.slice(0, OUTPUT_LIMIT - this.head.length);
    // The tail sees every character (it may overlap the head when the total is just over the limit).
    const tail = this.tail + (text.length > OUTPUT_TAIL ? text.slice(-OUTPUT_TAIL) : text);
    this.tail = tail.length > OUTPUT_TAIL ? tail.slice(-OUTPUT_TAIL) : tail;
  }
}
