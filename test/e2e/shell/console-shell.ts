/**
 * The generated conversations in the terminal room: one room, one human (the terminal's user, an operator), every
 * agent. The human types at a terminal (each message pasted, then Enter, so a message of several lines is one), and
 * commands are typed too; what the room prints is what the adapter was asked to post. The terminal room has no other
 * room, no DMs, no edits, no catch-up and never refuses a post: steps about them are not carried.
 */
import { PassThrough } from 'node:stream';
import { ConsoleAdapter } from '../../../adapters/console/index.js';
import type { ChatAdapter } from '../../../src/ports.js';
import type { FakeOpenAI, FakeToolCall } from '../../fakes/openai-server/index.js';
import { startFakeOpenAI } from '../../fakes/openai-server/index.js';
import { classifyLine } from '../../model/lines.js';
import { MAIN, type Observed, type ReplyAction, type Step, type World } from '../../model/script.js';
import { BridgeShell, type MutableOracle, type SharedClock } from './bridge-shell.js';
import type { Stage } from './run-shell.js';
import { type Watch, WatchedAdapter } from './watched-adapter.js';

const ROOM = 'console:main';

/** The model server every conversation of a file shares. */
export class ConsoleStage implements Stage {
  private constructor(
    readonly model: FakeOpenAI,
    readonly clock: SharedClock,
  ) {}

  static async start(): Promise<ConsoleStage> {
    return new ConsoleStage(await startFakeOpenAI(), { now: Date.now() });
  }

  readonly open = async (world: World, oracle: MutableOracle): Promise<ConsoleShell> => {
    this.clock.now = Math.max(Date.now(), this.clock.now + 60_000);
    const shell = new ConsoleShell(world, oracle, this.clock, this.model);
    await shell.open();
    return shell;
  };

  close(): Promise<void> {
    return this.model.close();
  }
}

/** A terminal: keys in (a TTY, so the room reads them as a person types), the screen out (read and dropped). */
function terminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 30 });
  output.resume();
  return { input, output };
}

export class ConsoleShell extends BridgeShell {
  private readonly watch: Watch;
  private adapter: WatchedAdapter | undefined;
  private keys: PassThrough | undefined;
  /** Messages and commands typed that the room has not taken yet. */
  private typed = { messages: 0, commands: 0 };
  private seenPosts = 0;

  constructor(world: World, oracle: MutableOracle, clock: SharedClock, model: FakeOpenAI) {
    super(world, oracle, clock, model);
    this.watch = {
      keys: new Map(),
      received: new Set(),
      holding: new Set(),
      typing: (room, agent) => this.calls.typing(room, agent),
    };
  }

  private get human(): string {
    return this.world.humans[0] ?? 'user';
  }

  protected roomKey(room: string): string {
    return room === MAIN ? ROOM : `console:${room}`;
  }

  protected scriptRoom(key: string): string {
    return key === ROOM ? MAIN : key;
  }

  protected platformConfig() {
    return { env: {}, agent: () => ({}) };
  }

  protected adapters(): ChatAdapter[] {
    const { input, output } = terminal();
    this.keys = input;
    this.typed = { messages: 0, commands: 0 };
    this.seenPosts = 0;
    const inner = new ConsoleAdapter({ input, output, interactive: true, userName: this.human });
    this.adapter = new WatchedAdapter(inner, this.watch);
    return [this.adapter];
  }

  protected async carry(step: Step): Promise<Step | undefined> {
    switch (step.kind) {
      case 'say': {
        if (step.room !== MAIN || step.human !== this.human) return undefined;
        // Nothing is missed at a terminal, and a line replies to nobody.
        const { addressed: _, missed: __, ...rest } = step;
        return rest;
      }
      case 'command':
        // The terminal's user runs the bridge: every command is an operator's.
        return step.room === MAIN && step.operator ? step : undefined;
      case 'edit':
      case 'post-fails':
      case 'reply-stalls':
      case 'reply-through':
      case 'caught-up':
        return undefined;
      default:
        return step;
    }
  }

  protected async platformStep(step: Step): Promise<void> {
    const adapter = this.adapter;
    if (!adapter) return;
    if (step.kind === 'say') {
      // Pasted, so that a message of several lines is one; Enter sends it.
      this.type(`\x1b[200~${step.text}\x1b[201~\r`);
      this.typed.messages = adapter.taken + 1;
    } else if (step.kind === 'command') {
      this.type(`/${step.name}${step.args ? ` ${step.args}` : ''}\r`);
      this.typed.commands = adapter.answered + 1;
    }
  }

  private type(keys: string): void {
    this.keys?.write(keys);
  }

  protected async reaches(action: ReplyAction, room: string, agent: string): Promise<boolean> {
    if (!this.world.agents.find((a) => a.name === agent)?.actions) return false;
    // One room: an agent posts here, and nowhere else.
    return action.kind === 'channel' && action.room === 'here' && room === MAIN;
  }

  protected toolCall(action: ReplyAction, _room: string, id: string): FakeToolCall {
    const requestReply = action.kind === 'channel' ? [...action.requestReply] : [];
    return {
      id,
      name: 'send_channel_message',
      arguments: { channel: 'here', message: action.text, request_reply: requestReply },
    };
  }

  protected platformBusy(): string | undefined {
    const adapter = this.adapter;
    if (!adapter) return 'no adapter';
    if (adapter.posting > 0) return 'posts are under way';
    if (adapter.receiving > 0 || adapter.taken < this.typed.messages) return 'a typed message is being taken in';
    if (adapter.commanding > 0 || adapter.answered < this.typed.commands) return 'a typed command is under way';
    return undefined;
  }

  protected takePosts(): Observed[] {
    const posts = this.adapter?.posts.slice(this.seenPosts) ?? [];
    this.seenPosts += posts.length;
    return posts.map((post): Observed => {
      const room = this.scriptRoom(`console:${post.channel}`);
      return post.agent === null
        ? { kind: 'line', room, line: classifyLine(post.text) }
        : { kind: 'post', room, agent: post.agent, text: post.text };
    });
  }
}
