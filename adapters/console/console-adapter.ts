import { randomUUID } from 'node:crypto';
import { createInterface, type Interface, type Key } from 'node:readline';
import { describeError } from '../../src/errors.js';
import {
  type AdapterSink,
  type ChatAdapter,
  COMMAND_NAMES,
  type CommandName,
  type Outbound,
  type Posted,
} from '../../src/ports.js';
import { interruptAction, QUIT_WINDOW_MS } from './interrupt.js';
import { Screen } from './screen.js';
import { safeForTerminal } from './terminal-text.js';

export const CONSOLE_PLATFORM = 'console';
export const CONSOLE_ROOM = 'main';

/**
 * The terminal room's channel: `main`, or with bridges that may share the store (DATABASE_URL) `main@<replica>`
 * (REPLICA_ID, else the host name): a terminal is one process's own, so each replica's is a room of its own, and a
 * replica started again under its name finds its room's history.
 */
export function terminalChannel(replica: string | undefined): string {
  return replica === undefined ? CONSOLE_ROOM : `${CONSOLE_ROOM}@${replica}`;
}
const RESULT_SHOWN = 500;
/** The prompt that continues a multi-line paste until Enter sends it. */
const CONTINUATION = '... ';
export const STOPPED_LINE = '[system]: stopped; control is with the humans';
/** Commands that stop the turns under way: they wait for the lines before them to reach the room, not to settle. */
const STOPPING = /^\/(pass|reset)(\s|$)/i;

const HELP = [
  '[system]: Commands:',
  '  /help                     this list',
  '  /status                   who works, turn counter, open requests, sandbox',
  "  /pass [agent]             stop the turns (or one agent's); humans get control",
  '  /reset [agent|workspace]  stop turns, reset the counter, remove the sandbox',
  '  /privacy [mentions|off]   show or set what agents see in this room',
  "  /budget [limit]           today's spend and limits; set one: bridge 20, room 5, agent data 2",
  "  /clear                    forget this room's history",
  '  /quit                     leave once the room is done',
  'Keys:',
  '  Ctrl-C   on a typed line: clear it (Up brings it back);',
  '           while agents work: stop them, as /pass does;',
  `           at an idle prompt, or pressed again within ${QUIT_WINDOW_MS / 1000} s: quit`,
  '  Ctrl-D   leave, like /quit',
  '  paste    a multi-line paste is one message; Enter sends it',
].join('\n');

export interface ConsoleAdapterOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Show a prompt and redraw it around output (a terminal); off for piped input. */
  readonly interactive: boolean;
  /** The human's name in the room. */
  readonly userName?: string;
  /** The clock that times a second Ctrl-C (tests pass their own). */
  readonly now?: () => number;
  /** The room's channel (`terminalChannel`); `main` by default. */
  readonly channel?: string;
}

/**
 * The terminal room: one room (`console:main`; with a shared store one per replica, `terminalChannel`), one human
 * (`@user`, an operator), every agent.
 * Piped input: each line is one message, sent once the room has settled; at end of input the room
 * finishes what it is doing and `finished` resolves. On a terminal: a prompt, a "thinking" line
 * while an agent works, Ctrl-C to clear a typed line, stop the agents or quit, and bracketed paste.
 */
export class ConsoleAdapter implements ChatAdapter {
  readonly platform = CONSOLE_PLATFORM;
  /** This terminal's room (`console:<channel>`). */
  readonly channel: string;
  /** Resolves at end of input, `/quit` or Ctrl-C; after the room has settled unless Ctrl-C quit. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  private rl: Interface | undefined;
  private sink: AdapterSink | undefined;
  /** Every line so far handled (piped: and the room settled after each message). */
  private chain: Promise<void> = Promise.resolve();
  /** Every line so far handed to the room (a message received, a command answered). */
  private handedOver: Promise<void> = Promise.resolve();
  private readonly user: string;
  private readonly screen: Screen;
  private readonly now: () => number;
  /** True from a message sent or an agent's typing until the room settles: Ctrl-C then stops turns. */
  private working = false;
  /** Bumped by every sign of work, so watching the room goes on while it keeps coming. */
  private activity = 0;
  private lastInterrupt: number | undefined;
  /** After /quit or Ctrl-D named whom leaving waits for: those agents (later ones are named as they start). */
  private leaving: Set<string> | undefined;
  /** Ctrl-C quit: finish at once, the bridge stops the turns. */
  private interrupted = false;
  private lines = 0;
  /** Lines of a paste so far: they go out with the line Enter finishes, as one message. */
  private readonly held: string[] = [];

  constructor(private readonly options: ConsoleAdapterOptions) {
    this.user = options.userName ?? 'user';
    this.channel = options.channel ?? CONSOLE_ROOM;
    this.screen = new Screen(options.output, options.interactive);
    this.now = options.now ?? Date.now;
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** Only this terminal's room is served here (another replica's terminal room is that process's own). */
  ownsChannel(channel: string): boolean {
    return channel === this.channel;
  }

  /** Lines read from the input so far (empty ones and commands too). */
  get linesRead(): number {
    return this.lines;
  }

  /** Whether the input is a person at a terminal (prompt, Ctrl-C) rather than piped lines. */
  get interactive(): boolean {
    return this.options.interactive;
  }

  private get promptText(): string {
    return `[@${this.user}]: `;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    const { input, output, interactive } = this.options;
    const rl = createInterface({ input, ...(interactive ? { output, terminal: true } : { terminal: false }) });
    this.rl = rl;
    rl.setPrompt(this.promptText);
    let quit = false;
    let pasting = false;
    const held = this.held;
    if (interactive) {
      // Before readline's own handler: mark pastes, and let the status line step aside on Enter.
      input.prependListener('keypress', (_text: string | undefined, key: Key | undefined) => {
        if (key?.name === 'paste-start') pasting = true;
        else if (key?.name === 'paste-end') pasting = false;
        else if (key?.name === 'return' || key?.name === 'enter') this.screen.beforeEnter();
      });
      // With a listener here, readline reports Ctrl-C instead of closing the input (its default).
      rl.on('SIGINT', () => this.interrupt());
    }
    rl.on('line', (line) => {
      this.lines++;
      if (quit) return;
      if (pasting) {
        held.push(line);
        rl.setPrompt(CONTINUATION);
        this.screen.afterEnter(true);
        return;
      }
      const text = [...held.splice(0), line].join('\n');
      rl.setPrompt(this.promptText);
      this.screen.afterEnter(false);
      if (text.trim() === '/quit') {
        quit = true;
        this.sayWhatQuitWaitsFor();
        rl.close();
        return;
      }
      this.queueLine(text);
    });
    rl.on('close', () => {
      // Ctrl-D leaves like /quit, and says so; piped input just ends.
      if (interactive && !quit && !this.interrupted) this.sayWhatQuitWaitsFor();
      this.screen.close();
      if (this.interrupted) {
        this.resolveFinished();
        return;
      }
      this.chain = this.chain
        .then(() => this.settle())
        .catch(() => {})
        .then(() => this.resolveFinished());
    });
    this.screen.attach(rl);
  }

  async stop(): Promise<void> {
    this.rl?.close();
  }

  async post(message: Outbound): Promise<Posted> {
    if (message.agent && this.screen.statusText === thinking(message.agent)) this.screen.setStatus(undefined);
    this.print(message.agent ? `[@${message.agent}]: ${message.text}` : `[system]: ${message.text}`);
    return { messageIds: [`console-${randomUUID()}`] };
  }

  async typing(_channel: string, agent: string): Promise<void> {
    // Leaving waits for the whole room: an agent asked after /quit named the others is waited for too, and said so.
    if (this.leaving && !this.leaving.has(agent)) {
      this.leaving.add(agent);
      this.print(`[system]: leaving once @${agent} finishes too`);
    }
    if (!this.options.interactive) return;
    this.screen.setStatus(thinking(agent));
    void this.watch();
  }

  toolRun(_channel: string, agent: string, command: string, output: string): void {
    const clean = safeForTerminal(output).replace(/\s+$/, '');
    const shown = clean.length > RESULT_SHOWN ? `${clean.slice(0, RESULT_SHOWN)}...` : clean;
    this.print(`[@${agent}] running: ${command}\n[result]: ${shown}`);
  }

  /** Prints one block of lines (above the prompt on a terminal); escape sequences in it are removed. */
  print(text: string): void {
    this.screen.print(safeForTerminal(text));
  }

  /**
   * A message from an operator elsewhere (their coding agent, over MCP): shown on the terminal as theirs and handed to
   * the room as the terminal's own lines are; resolves with its id once the room took it.
   */
  async postFrom(name: string, text: string): Promise<string> {
    const sink = this.sink;
    if (!sink) throw new Error('the terminal room is not open');
    const messageId = `console-${randomUUID()}`;
    this.print(`[@${name}]: ${text}`);
    const author = { id: `web:${name.toLowerCase()}`, name, kind: 'human' } as const;
    await sink.receive({ platform: CONSOLE_PLATFORM, channel: this.channel, messageId, author, text });
    if (this.options.interactive) void this.watch();
    return messageId;
  }

  /** This room as one an operator may post into over MCP (`postFrom`). */
  postableRoom(): { key: string; post(person: { name: string }, text: string): Promise<string> } {
    return { key: `${CONSOLE_PLATFORM}:${this.channel}`, post: (person, text) => this.postFrom(person.name, text) };
  }

  private async settle(): Promise<void> {
    await this.sink?.settled?.(CONSOLE_PLATFORM, this.channel);
  }

  /** Tracks that the room is at work until it settles; the thinking line goes with it. */
  private async watch(): Promise<void> {
    this.activity++;
    if (this.working) return;
    this.working = true;
    let seen: number;
    do {
      seen = this.activity;
      await this.settle().catch(() => {});
    } while (seen !== this.activity);
    this.working = false;
    this.screen.setStatus(undefined);
  }

  /** Leaving waits for the room to be done: says for whom, and how not to wait. */
  private sayWhatQuitWaitsFor(): void {
    const agents = this.sink?.working?.(CONSOLE_PLATFORM, this.channel) ?? [];
    if (agents.length > 0) {
      this.leaving = new Set(agents);
      const names = agents.map((name) => `@${name}`);
      const who =
        names.length === 1 ? `${names[0]} finishes` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)} finish`;
      this.print(`[system]: leaving once ${who} (Ctrl-C leaves now)`);
    } else if (this.working) {
      this.print('[system]: leaving once the room is done (Ctrl-C leaves now)');
    }
  }

  /**
   * Ctrl-C on a typed line (or a paste still being composed) clears it, as shells do; the press counts toward
   * nothing else (it neither stops the agents nor starts the window for quitting).
   */
  private clearDraft(): boolean {
    const rl = this.rl;
    if (!rl || (rl.line === '' && this.held.length === 0)) return false;
    const draft = [...this.held.splice(0), rl.line].join('\n');
    const history = (rl as unknown as { history?: string[] }).history;
    // Up brings a cleared line back (a multi-line paste does not fit the one-line editor).
    if (history && draft.trim() && !draft.includes('\n') && history[0] !== draft) history.unshift(draft);
    this.screen.clearInput(() => {
      const editor = rl as unknown as { line: string; cursor: number };
      editor.line = '';
      editor.cursor = 0;
      rl.setPrompt(this.promptText);
    });
    return true;
  }

  private interrupt(): void {
    if (this.clearDraft()) return;
    const now = this.now();
    const action = interruptAction({ busy: this.working, now, previous: this.lastInterrupt });
    this.lastInterrupt = now;
    if (action === 'quit') {
      this.interrupted = true;
      this.rl?.close();
      return;
    }
    void this.stopTurns();
  }

  /** Ctrl-C while agents work: what `/pass` does, said in one line. */
  private async stopTurns(): Promise<void> {
    try {
      await this.command('pass', '');
      this.screen.setStatus(undefined);
      this.print(STOPPED_LINE);
    } catch (error) {
      this.print(`[system]: the agents could not be stopped: ${describeError(error)}`);
    }
  }

  private async command(name: CommandName, args: string): Promise<string> {
    const sink = this.sink;
    if (!sink) return '';
    // Without a platform id a command is always answered here (no other bridge receives it).
    const answer = await sink.command({
      platform: CONSOLE_PLATFORM,
      channel: this.channel,
      name,
      args,
      user: { id: this.user, name: this.user },
      isOperator: true, // the terminal user runs the bridge
    });
    return answer ?? '';
  }

  /**
   * Lines are handled one at a time (piped: each after the room settled, like a person waiting for answers). A
   * command that stops the turns (/pass, /reset) waits only for the lines before it to reach the room: it stops the
   * turn under way, as on every platform, instead of waiting for its answer.
   */
  private queueLine(text: string): void {
    let handed!: () => void;
    const handedOver = new Promise<void>((resolve) => {
      handed = resolve;
    });
    const stops = STOPPING.test(text.trim());
    const done = (stops ? this.handedOver : this.chain)
      .then(() => this.handleLine(text, handed))
      .catch((error: unknown) => this.print(`[system]: that message could not be handled: ${describeError(error)}`))
      .finally(handed);
    this.handedOver = handedOver;
    const before = this.chain;
    this.chain = stops ? Promise.all([before, done]).then(() => {}) : done;
  }

  private async handleLine(raw: string, handed: () => void): Promise<void> {
    const sink = this.sink;
    const line = raw.trim();
    if (!sink || !line) return;
    const command = /^\/(\w+)\s*(.*)$/.exec(line);
    if (command) {
      const name = command[1]?.toLowerCase() ?? '';
      if (name === 'help') {
        this.print(HELP);
        return;
      }
      if (!(COMMAND_NAMES as readonly string[]).includes(name)) {
        this.print(
          `[system]: Unknown command /${command[1]}. Commands: /help, /status, /pass, /reset, /privacy, /budget, /clear, /quit.`,
        );
        return;
      }
      this.print(`[system]: ${await this.command(name as CommandName, command[2] ?? '')}`);
      return;
    }
    if (!this.options.interactive) this.print(`[@${this.user}]: ${line}`);
    await sink.receive({
      platform: CONSOLE_PLATFORM,
      channel: this.channel,
      messageId: `console-${randomUUID()}`,
      author: { id: this.user, name: this.user, kind: 'human' },
      text: line,
    });
    handed();
    if (this.options.interactive) void this.watch();
    else await this.settle();
  }
}

function thinking(agent: string): string {
  return `@${agent} is thinking…`;
}
