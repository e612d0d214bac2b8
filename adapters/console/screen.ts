import { clearScreenDown, cursorTo, type Interface, moveCursor } from 'node:readline';

/** Asks the terminal to mark pastes with ESC[200~ ... ESC[201~ (so a multi-line paste is one message). */
export const BRACKETED_PASTE_ON = '\x1b[?2004h';
export const BRACKETED_PASTE_OFF = '\x1b[?2004l';

/**
 * What the terminal room shows. On a terminal: messages scroll above an optional status line
 * ("@data is thinking…"), and below it the prompt with whatever the human is typing, redrawn
 * after every message. Without a terminal (piped input): plain lines, no status, no prompt.
 */
export class Screen {
  private rl: Interface | undefined;
  private status: string | undefined;
  /** Rows the status line takes on screen right now (0 or 1). */
  private statusRows = 0;
  /** While Enter commits typed lines to the transcript, the status line stays away. */
  private statusHidden = false;
  private closed = false;
  private readonly restoreOnExit = () => this.out.write(BRACKETED_PASTE_OFF);

  constructor(
    private readonly out: NodeJS.WritableStream,
    readonly interactive: boolean,
  ) {}

  /** Starts drawing the prompt of this readline interface (a terminal only). */
  attach(rl: Interface): void {
    if (!this.interactive) return;
    this.rl = rl;
    this.out.write(BRACKETED_PASTE_ON);
    // A crash must not leave the user's shell in bracketed paste mode.
    process.once('exit', this.restoreOnExit);
    this.draw();
  }

  /** The input ended: the prompt goes, the terminal is left as it was found. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.rl) return;
    this.erase();
    this.out.write(BRACKETED_PASTE_OFF);
    process.off('exit', this.restoreOnExit);
  }

  /** Prints a block of lines above the status line and the prompt. */
  print(text: string): void {
    if (!this.rl || this.closed) {
      this.out.write(`${text}\n`);
      return;
    }
    this.erase();
    this.out.write(`${text}\n`);
    this.draw();
  }

  /** Shows (or, with undefined, clears) the status line. */
  setStatus(text: string | undefined): void {
    if (text === this.status) return;
    this.status = text;
    if (!this.rl || this.closed) return;
    this.erase();
    this.draw();
  }

  get statusText(): string | undefined {
    return this.status;
  }

  /** Redraws the prompt (after its text changed). */
  redraw(): void {
    if (!this.rl || this.closed) return;
    this.erase();
    this.draw();
  }

  /**
   * Drops what is being typed: erased where it is drawn now (however many rows it wraps over), `clear` empties
   * readline's line, and the prompt is drawn again; a paste being composed ends, so the status line returns.
   */
  clearInput(clear: () => void): void {
    if (!this.rl || this.closed) {
      clear();
      return;
    }
    this.erase();
    clear();
    this.statusHidden = false;
    this.draw();
  }

  /** Enter is about to commit the typed line to the transcript: the status line steps out from above it. */
  beforeEnter(): void {
    if (!this.rl || this.closed || this.statusRows === 0) return;
    this.erase();
    this.statusHidden = true;
    this.draw();
  }

  /**
   * Enter was handled; the cursor is on a fresh row. `composing`: the line was part of a paste, so
   * the prompt continues it and the status line waits until the message is sent.
   */
  afterEnter(composing: boolean): void {
    if (!this.rl || this.closed) return;
    this.statusHidden = composing;
    this.draw();
  }

  /** Moves to the first row of the status line (or the prompt) and clears everything below. */
  private erase(): void {
    const rl = this.rl;
    if (!rl) return;
    const up = rl.getCursorPos().rows + this.statusRows;
    if (up > 0) moveCursor(this.out, 0, -up);
    cursorTo(this.out, 0);
    clearScreenDown(this.out);
    this.statusRows = 0;
  }

  private draw(): void {
    const rl = this.rl;
    if (!rl || this.closed) return;
    if (this.status && !this.statusHidden) {
      this.out.write(`${this.status}\n`);
      const columns = (this.out as { columns?: number }).columns ?? Number.POSITIVE_INFINITY;
      this.statusRows = Math.max(1, Math.ceil(this.status.length / columns));
    }
    // readline moves up by the rows it drew last time before redrawing; the prompt is new here.
    (rl as unknown as { prevRows: number }).prevRows = 0;
    rl.prompt(true);
  }
}
