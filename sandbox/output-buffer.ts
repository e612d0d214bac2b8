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
  private readonly decoder = new StringDecoder('utf8');
  private head = '';
  private tail = '';
  private total = 0;

  /** Characters seen so far, including the discarded middle. */
  get length(): number {
    return this.total;
  }

  write(chunk: Buffer | string): void {
    this.append(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  /** The output by the truncation rule; flushes a trailing partial UTF-8 sequence. */
  text(): string {
    this.append(this.decoder.end());
    if (this.total <= OUTPUT_LIMIT) return this.head;
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
