import { PassThrough } from 'node:stream';
import { Terminal } from '@xterm/headless';

/**
 * A terminal for the terminal room's tests: `input` is what the keyboard sends (a TTY stream, so
 * readline runs in terminal mode), `output` is rendered by a real terminal emulator (xterm.js), so
 * tests read the screen a person would see.
 */
export class FakeTerminal {
  readonly input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  readonly output = Object.assign(new PassThrough(), { isTTY: true, columns: 60, rows: 16 });
  // A TTY in raw mode still turns "\n" into "\r\n" on output (ONLCR); so does this terminal.
  readonly term = new Terminal({ cols: 60, rows: 16, allowProposedApi: true, convertEol: true });
  /** Everything written, escape sequences included. */
  written = '';
  titles: string[] = [];

  constructor() {
    this.output.on('data', (chunk: Buffer) => {
      this.written += chunk.toString('utf8');
      this.term.write(chunk.toString('utf8'));
    });
    this.term.onTitleChange((title) => this.titles.push(title));
  }

  /** Keys as the terminal sends them: `\r` for Enter, `\x03` for Ctrl-C. */
  type(keys: string): void {
    this.input.write(keys);
  }

  /** A paste, as a terminal in bracketed paste mode sends it. */
  paste(text: string): void {
    this.input.write(`\x1b[200~${text}\x1b[201~`);
  }

  /** The screen's rows (trailing blanks cut, empty rows at the bottom dropped), once all output is drawn. */
  async screen(): Promise<string[]> {
    await new Promise<void>((resolve) => this.term.write('', resolve));
    const buffer = this.term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < buffer.length; i++) rows.push((buffer.getLine(i)?.translateToString(true) ?? '').trimEnd());
    while (rows.length > 0 && rows.at(-1) === '') rows.pop();
    return rows;
  }

  /** Polls the screen until `predicate` holds (bounded by the test's timeout); returns that screen. */
  async waitFor(predicate: (rows: string[]) => boolean): Promise<string[]> {
    for (;;) {
      const rows = await this.screen();
      if (predicate(rows)) return rows;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** The cursor's position on screen (row within the whole buffer, column). */
  async cursor(): Promise<{ row: number; col: number }> {
    await new Promise<void>((resolve) => this.term.write('', resolve));
    const buffer = this.term.buffer.active;
    return { row: buffer.baseY + buffer.cursorY, col: buffer.cursorX };
  }
}
