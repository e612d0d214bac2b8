import { randomUUID } from 'node:crypto';
import { createInterface, type Interface } from 'node:readline';
import { describeError } from '../../src/errors.js';
import type { AdapterSink, ChatAdapter, CommandName, Outbound, Posted } from '../../src/ports.js';

export const CONSOLE_PLATFORM = 'console';
export const CONSOLE_ROOM = 'main';
const COMMANDS: readonly CommandName[] = ['pass', 'reset', 'status', 'privacy', 'clear'];
const RESULT_SHOWN = 500;

export interface ConsoleAdapterOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Show a prompt and redraw it around output (a terminal); off for piped input. */
  readonly interactive: boolean;
  /** The human's name in the room. */
  readonly userName?: string;
}

/**
 * The terminal room: one room (`console:main`), one human (`@user`, an operator), every agent.
 * Piped input: each line is one message, sent once the room has settled; at end of input the room
 * finishes what it is doing and `finished` resolves.
 */
export class ConsoleAdapter implements ChatAdapter {
  readonly platform = CONSOLE_PLATFORM;
  /** Resolves at end of input or `/quit`, after the room has settled. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  private rl: Interface | undefined;
  private sink: AdapterSink | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly user: string;

  constructor(private readonly options: ConsoleAdapterOptions) {
    this.user = options.userName ?? 'user';
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    const rl = createInterface({
      input: this.options.input,
      ...(this.options.interactive ? { output: this.options.output, terminal: true } : { terminal: false }),
    });
    this.rl = rl;
    rl.setPrompt(`[@${this.user}]: `);
    let quit = false;
    rl.on('line', (line) => {
      if (quit) return;
      if (line.trim() === '/quit') {
        quit = true;
        rl.close();
        return;
      }
      // Lines are handled one at a time, each after the room settled: like a person waiting for answers.
      this.chain = this.chain
        .then(() => this.handleLine(line))
        .catch((error: unknown) => this.print(`[system]: that message could not be handled: ${describeError(error)}`))
        .then(() => this.prompt());
    });
    rl.on('close', () => {
      this.chain = this.chain
        .then(() => this.settle())
        .catch(() => {})
        .then(() => this.resolveFinished());
    });
    this.prompt();
  }

  async stop(): Promise<void> {
    this.rl?.close();
  }

  async post(message: Outbound): Promise<Posted> {
    this.print(message.agent ? `[@${message.agent}]: ${message.text}` : `[system]: ${message.text}`);
    return { messageIds: [`console-${randomUUID()}`] };
  }

  toolRun(_channel: string, agent: string, command: string, output: string): void {
    const trimmed = output.replace(/\s+$/, '');
    const shown = trimmed.length > RESULT_SHOWN ? `${trimmed.slice(0, RESULT_SHOWN)}...` : trimmed;
    this.print(`[@${agent}] running: ${command}\n[result]: ${shown}`);
  }

  /** Prints one line block, keeping an interactive prompt below it. */
  print(text: string): void {
    const out = this.options.output as NodeJS.WriteStream;
    if (this.options.interactive && typeof out.clearLine === 'function') {
      out.clearLine(0);
      out.cursorTo(0);
    }
    out.write(`${text}\n`);
    if (this.options.interactive) this.rl?.prompt(true);
  }

  private prompt(): void {
    if (this.options.interactive) this.rl?.prompt(true);
  }

  private async settle(): Promise<void> {
    await this.sink?.settled?.(CONSOLE_PLATFORM, CONSOLE_ROOM);
  }

  private async handleLine(raw: string): Promise<void> {
    const sink = this.sink;
    const line = raw.trim();
    if (!sink || !line) return;
    const command = /^\/(\w+)\s*(.*)$/.exec(line);
    if (command) {
      const name = command[1]?.toLowerCase() as CommandName;
      if (!COMMANDS.includes(name)) {
        this.print(
          `[system]: Unknown command /${command[1]}. Commands: /pass, /reset, /status, /privacy, /clear, /quit.`,
        );
        return;
      }
      const answer = await sink.command({
        platform: CONSOLE_PLATFORM,
        channel: CONSOLE_ROOM,
        name,
        args: command[2] ?? '',
        user: { id: this.user, name: this.user },
        isOperator: true, // the terminal user runs the bridge
      });
      this.print(`[system]: ${answer}`);
      return;
    }
    if (!this.options.interactive) this.print(`[@${this.user}]: ${line}`);
    await sink.receive({
      platform: CONSOLE_PLATFORM,
      channel: CONSOLE_ROOM,
      messageId: `console-${randomUUID()}`,
      author: { id: this.user, name: this.user, kind: 'human' },
      text: line,
    });
    if (!this.options.interactive) await this.settle();
  }
}
