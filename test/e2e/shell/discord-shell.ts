/**
 * The generated conversations on Discord: every world agent is its own bot on the fake Discord (the real discord.js
 * clients of the real adapter talk to it over 127.0.0.1), humans post through its gateway, commands are slash
 * commands on the control bot, a refused post is a 403 from its REST API, and a missed message is one posted while
 * a bot's gateway was down, fetched by the adapter's catch-up when the bot resumes.
 */
import { createDiscordAdapter } from '../../../adapters/discord/index.js';
import type { ChatAdapter } from '../../../src/ports.js';
import { type FakeDiscord, type FakeMessage, startFakeDiscord } from '../../fakes/discord/index.js';
import type { FakeOpenAI, FakeToolCall } from '../../fakes/openai-server/index.js';
import { startFakeOpenAI } from '../../fakes/openai-server/index.js';
import { classifyLine } from '../../model/lines.js';
import { dmRoom, MAIN, type Observed, type ReplyAction, SIDE, type Step, type World } from '../../model/script.js';
import { BridgeShell, type MutableOracle, type SharedClock } from './bridge-shell.js';
import type { Stage } from './run-shell.js';
import { type Watch, WatchedAdapter } from './watched-adapter.js';

const AGENTS = ['ada', 'bo', 'cy', 'dot', 'eli', 'fay'];
const HUMANS = ['alice', 'bob', 'carol'];
/** Who runs commands: an operator (in OPERATORS) and someone who is not. */
const OPERATOR = 'op';
const GUEST = 'guest';
const CHANNELS: Record<string, string> = { [MAIN]: 'main', [SIDE]: 'side' };

/** The fake Discord and model server every conversation of a file shares (each has a bridge of its own). */
export class DiscordStage implements Stage {
  private constructor(
    readonly discord: FakeDiscord,
    readonly model: FakeOpenAI,
    readonly clock: SharedClock,
  ) {}

  static async start(): Promise<DiscordStage> {
    const clock: SharedClock = { now: Date.now() };
    const discord = await startFakeDiscord({
      bots: AGENTS.map((name) => ({ token: `tok-${name}`, name: `${name}-bot` })),
      humans: [...HUMANS, OPERATOR, GUEST].map((name) => ({ name })),
      channels: Object.values(CHANNELS),
      clock: () => clock.now,
    });
    return new DiscordStage(discord, await startFakeOpenAI(), clock);
  }

  /** A conversation's shell, its bridge started. */
  readonly open = async (world: World, oracle: MutableOracle): Promise<DiscordShell> => {
    // Each conversation starts later than the last ended, on a platform that forgot the last one's messages.
    this.clock.now = Math.max(Date.now(), this.clock.now + 60_000);
    this.discord.world.messages.length = 0;
    this.discord.world.nonces.clear();
    (this.discord.requests as unknown[]).length = 0;
    for (const name of Object.values(CHANNELS)) this.discord.refusePosts(name, 0);
    const shell = new DiscordShell(world, oracle, this.clock, this.model, this.discord);
    await shell.open();
    return shell;
  };

  async close(): Promise<void> {
    await this.model.close();
    await this.discord.close();
  }
}

export class DiscordShell extends BridgeShell {
  private readonly rooms = new Map<string, string>();
  private readonly scriptRooms = new Map<string, string>();
  private readonly watch: Watch;
  private adapter: WatchedAdapter | undefined;
  /** Human messages each room stored, oldest first (an edit names one by how far back it is). */
  private readonly said = new Map<string, FakeMessage[]>();
  /** Platform ids the bridge must take in before the step is over. */
  private readonly expected = new Set<string>();
  private seenRequests = 0;

  constructor(
    world: World,
    oracle: MutableOracle,
    clock: SharedClock,
    model: FakeOpenAI,
    private readonly discord: FakeDiscord,
  ) {
    super(world, oracle, clock, model);
    const { discord: d } = this;
    for (const [room, name] of Object.entries(CHANNELS)) this.room(room, d.channel(name).id);
    for (const agent of world.agents) {
      for (const human of world.humans) {
        this.room(dmRoom(agent.name, human), d.world.dmChannel(d.human(human).id, this.bot(agent.name).id).id);
      }
    }
    this.watch = {
      keys: new Map(),
      received: new Set(),
      holding: new Set(),
      typing: (room, agent) => this.calls.typing(room, agent),
    };
  }

  private room(script: string, channel: string): void {
    this.rooms.set(script, channel);
    this.scriptRooms.set(`discord:${channel}`, script);
  }

  private bot(agent: string) {
    return this.discord.bot(`${agent}-bot`);
  }

  private channelOf(room: string): string {
    const channel = this.rooms.get(room);
    if (!channel) throw new Error(`no Discord room for ${room}`);
    return channel;
  }

  protected roomKey(room: string): string {
    return `discord:${this.channelOf(room)}`;
  }

  protected scriptRoom(key: string): string {
    return this.scriptRooms.get(key) ?? key;
  }

  protected platformConfig() {
    return {
      env: {
        DISCORD_API_URL: this.discord.apiURL,
        OPERATORS: this.discord.human(OPERATOR).id,
        // The model has no approvals: an agent's action with no one human behind it would wait for an operator.
        ACTING_CHECK: 'off',
      },
      agent: (name: string) => ({ discord: { token: `tok-${name}`, control: false } }),
    };
  }

  protected adapters(): ChatAdapter[] {
    const inner = createDiscordAdapter({
      config: this.configOf(),
      logger: this.log.logger,
      rest: { globalRequestsPerSecond: 10_000 },
    });
    // A new adapter catches up afresh: no catch-up is held across a restart.
    this.watch.holding.clear();
    this.adapter = new WatchedAdapter(inner, this.watch);
    return [this.adapter];
  }

  protected async carry(step: Step): Promise<Step | undefined> {
    switch (step.kind) {
      case 'say': {
        const { addressed: _, missed, ...rest } = step;
        const channel = this.channelOf(step.room);
        // A reply addresses one agent: the first named that has a post here to reply to.
        const target = (step.addressed ?? []).find((agent) => this.postOf(channel, agent));
        // A catch-up starts where the room was last known complete: a room the bridge never stored a message of
        // has nowhere to start from, so what it missed there is not fetched.
        const fetchable = missed && (await this.store.store.rooms.lastPlatformMessageId('discord', channel));
        return { ...rest, ...(target ? { addressed: [target] } : {}), ...(fetchable ? { missed: true } : {}) };
      }
      case 'command': {
        // A command is sent in a channel of the fake server (a DM's commands are not carried here).
        if (!(step.room in CHANNELS)) return undefined;
        const agent = this.world.agents.find((a) => a.name.toLowerCase() === step.args.toLowerCase());
        // Discord offers each command's options as choices: only those can be sent.
        if (step.name === 'status') return { ...step, args: '' };
        if (step.name === 'privacy') return ['', 'mentions', 'off'].includes(step.args) ? step : undefined;
        if (step.args === '' || agent) return { ...step, args: agent?.name ?? '' };
        return undefined;
      }
      // A reply the platform keeps failing waits for the bridge's retries (seconds apart): not carried here;
      // test/reliability/post-failure.test.ts plays it through the fakes.
      case 'reply-stalls':
      case 'reply-through':
        return undefined;
      default:
        return step;
    }
  }

  protected async platformStep(step: Step): Promise<void> {
    switch (step.kind) {
      case 'say':
        return this.say(step);
      case 'edit':
        return this.edit(step);
      case 'command':
        await this.discord.slash(
          this.bot(this.world.agents[0]?.name ?? ''),
          step.operator ? OPERATOR : GUEST,
          CHANNELS[step.room] ?? 'main',
          step.name,
          step.args === '' ? {} : { [step.name === 'privacy' ? 'mode' : 'agent']: step.args },
        );
        return;
      case 'post-fails':
        this.discord.refusePosts(this.channelOf(step.room));
        return;
      case 'caught-up':
        this.adapter?.release(this.channelOf(step.room));
        return;
      default:
        return;
    }
  }

  private say(step: Extract<Step, { kind: 'say' }>): void {
    const channel = this.channelOf(step.room);
    const human = this.discord.human(step.human);
    const reply = step.addressed?.[0] ? this.postOf(channel, step.addressed[0])?.id : undefined;
    const dm = /^chat:dm-([^-]+)-/.exec(step.room)?.[1];
    let message: FakeMessage;
    if (step.missed) {
      // Posted while the bot that sees the room was away; its gateway resumes and the adapter catches up.
      message = this.discord.world.createMessage({
        channelId: channel,
        authorId: human.id,
        content: step.text,
        replyTo: reply ?? null,
      });
      this.watch.holding.add(channel);
      this.coverage.add(`a message ${dm ? 'to a DM' : 'in a channel'} fetched by a catch-up`);
      this.discord.dropGateway(this.bot(dm ?? this.world.agents[0]?.name ?? ''));
    } else if (dm) {
      message = this.discord.dm(human, this.bot(dm), step.text);
    } else {
      message = this.discord.humanSays(channel, human, step.text, reply ? { replyTo: reply } : {});
    }
    this.expected.add(message.id);
    this.said.set(step.room, [...(this.said.get(step.room) ?? []), message]);
  }

  private edit(step: Extract<Step, { kind: 'edit' }>): void {
    const said = this.said.get(step.room) ?? [];
    const original = said[said.length - step.back];
    if (!original) return;
    const at = step.late ? original.createdAt + this.world.editWindowMs + 1 : this.clock.now;
    const id = `${original.id}:edit:${at}`;
    // An edit made at the same moment as an earlier one is the same edit to Discord's readers: taken once.
    if (!this.watch.received.has(id)) this.expected.add(id);
    this.discord.humanEdits(original, step.text, { at });
  }

  /** The newest post of an agent in a channel (a line of the bridge, though its bot posts it, is not one). */
  private postOf(channel: string, agent: string): FakeMessage | undefined {
    const bot = this.bot(agent).id;
    return this.discord
      .messages(channel)
      .filter((m) => m.authorId === bot && this.watch.keys.get((m.nonce ?? '').replace(/\.\d+$/, '')) === agent)
      .at(-1);
  }

  protected async reaches(action: ReplyAction, room: string, agent: string): Promise<boolean> {
    if (!this.world.agents.find((a) => a.name === agent)?.actions) return false;
    if (action.kind === 'channel') return action.room === 'other' || !room.startsWith('chat:dm-');
    if (this.world.agents.some((a) => a.name.toLowerCase() === action.to.toLowerCase())) return false;
    // A bot reaches a human by DM only once the adapter has met them (since it started).
    const reached = (await this.adapter?.openDirect?.(agent, action.to)) !== undefined;
    if (!reached) this.coverage.add('a DM to a human the adapter had not met, left out');
    return reached;
  }

  protected toolCall(action: ReplyAction, room: string, id: string): FakeToolCall {
    if (action.kind === 'dm') {
      return {
        id,
        name: 'send_dm',
        arguments: { to: action.to, message: action.text, request_reply: action.requestReply },
      };
    }
    const channel = action.room === 'here' ? 'here' : `#${room === MAIN ? 'side' : 'main'}`;
    return {
      id,
      name: 'send_channel_message',
      arguments: { channel, message: action.text, request_reply: [...action.requestReply] },
    };
  }

  protected platformBusy(): string | undefined {
    const adapter = this.adapter;
    if (!adapter) return 'no adapter';
    if (adapter.refused > 0) this.coverage.add('a post the platform refused');
    if (adapter.posting > 0) return 'posts are under way';
    if (adapter.receiving > 0) return 'messages are being taken in';
    if (adapter.commanding > 0) return 'a command is under way';
    for (const id of this.expected) {
      if (!this.watch.received.has(id)) return `message ${id} is not taken in yet`;
      this.expected.delete(id);
    }
    for (const [room, id] of adapter.passed) {
      if (this.store.marks.get(room) !== id) return `${room}'s catch-up is not done yet`;
      adapter.passed.delete(room);
    }
    return undefined;
  }

  /** What reached Discord since the last call: each message post, refused or not, in the order it came. */
  protected takePosts(): Observed[] {
    const requests = this.discord.requests.slice(this.seenRequests);
    this.seenRequests = this.discord.requests.length;
    const observed: Observed[] = [];
    for (const request of requests) {
      const channel = /^\/channels\/(\d+)\/messages$/.exec(request.path)?.[1];
      if (request.method !== 'POST' || !channel) continue;
      const body = request.body as { content?: string; nonce?: string };
      const agent = this.watch.keys.get(String(body.nonce ?? '').replace(/\.\d+$/, '')) ?? null;
      const room = this.scriptRoom(`discord:${channel}`);
      const text = this.names(body.content ?? '');
      if (agent === null) observed.push({ kind: 'line', room, line: classifyLine(text) });
      else observed.push({ kind: 'post', room, agent, text });
      // The bridge speaks through the DM's own bot in a DM, else through the control bot (the first agent's).
      const from = agent ?? /^chat:dm-([^-]+)-/.exec(room)?.[1] ?? this.world.agents[0]?.name ?? '';
      if (request.botId !== this.bot(from).id) {
        this.calls.unexpected.push(`a post in ${room} as @${agent ?? 'the bridge'} came from another bot`);
      }
    }
    return observed;
  }

  /** Platform mentions back into `@name`, as people read them. */
  private names(text: string): string {
    return text.replace(/<@!?(\d+)>/g, (raw, id: string) => {
      const user = this.discord.world.user(id);
      if (!user) return raw;
      return `@${user.bot ? user.username.replace(/-bot$/, '') : user.username}`;
    });
  }
}
