import type { AgentConfig, Config } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AdapterSink, ChatAdapter, CommandEvent, Inbound, Sandbox } from '../ports.js';
import { classifyReply, extractMentions, handBack, handBackText, limitReached, nextCandidates } from '../room/index.js';
import type { RoomMessage, ToolRun } from '../room/types.js';
import type { Store } from '../store/index.js';
import { AgentRunner, defaultLlmFactory, type LlmFactory } from './agent-runner.js';
import { ChannelActor } from './channel-actor.js';
import { handleCommand } from './commands.js';
import { RoomState } from './room-state.js';

export interface BridgeOptions {
  readonly config: Config;
  readonly store: Store;
  readonly sandbox: Sandbox;
  readonly adapters: readonly ChatAdapter[];
  readonly logger: Logger;
  /** Builds each agent's LLM client (default: the OpenAI SDK against the agent's endpoint). */
  readonly llm?: LlmFactory;
  readonly clock?: () => number;
}

/** A room as the bridge tracks it: its stored row, its actor, its adapter. */
export interface Room {
  readonly state: RoomState;
  readonly key: string;
  readonly actor: ChannelActor;
  readonly adapter: ChatAdapter;
}

/**
 * The imperative shell around room/: dedupe and persistence, one serial actor per room,
 * agent turns, hand-backs and operator commands.
 */
export class Bridge {
  readonly sink: AdapterSink;
  readonly rooms = new Map<string, Room>();
  private readonly adapters = new Map<string, ChatAdapter>();
  private readonly runner: AgentRunner;
  private readonly clock: () => number;
  private stopped = false;

  constructor(readonly options: BridgeOptions) {
    for (const adapter of options.adapters) this.adapters.set(adapter.platform, adapter);
    this.runner = new AgentRunner(options.config, options.llm ?? defaultLlmFactory(options.config), options.sandbox);
    this.clock = options.clock ?? Date.now;
    this.sink = {
      receive: (event) => this.receive(event),
      command: (event) => this.command(event),
      lastMessageId: (platform, channel) => options.store.lastPlatformMessageId(platform, channel),
      settled: async (platform, channel) => {
        await this.rooms.get(`${platform}:${channel}`)?.actor.idle();
      },
    };
  }

  get config(): Config {
    return this.options.config;
  }

  private get log(): Logger {
    return this.options.logger;
  }

  async start(): Promise<void> {
    for (const adapter of this.adapters.values()) await adapter.start(this.sink);
  }

  /** Stops every turn, then the adapters and the sandbox. The store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const room of this.rooms.values()) room.actor.stop();
    await Promise.allSettled([...this.rooms.values()].map((room) => room.actor.idle()));
    for (const adapter of this.adapters.values()) {
      await adapter.stop().catch((error: unknown) => this.log.warn({ err: error }, 'adapter stop failed'));
    }
    await this.options.sandbox.close().catch((error: unknown) => this.log.warn({ err: error }, 'sandbox close failed'));
  }

  /** Resolves when every room has nothing queued or running. */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.rooms.values()].filter((room) => room.actor.busy);
      if (busy.length === 0) return;
      await Promise.all(busy.map((room) => room.actor.idle()));
    }
  }

  agent(name: string): AgentConfig | undefined {
    return this.config.agents.find((a) => a.name.toLowerCase() === name.toLowerCase());
  }

  room(platform: string, channel: string, directAgent?: string): Room {
    const key = `${platform}:${channel}`;
    let room = this.rooms.get(key);
    if (!room) {
      const adapter = this.adapters.get(platform);
      if (!adapter) throw new Error(`no adapter for platform "${platform}"`);
      const row = this.options.store.channel(platform, channel, directAgent);
      const state = new RoomState(this.options.store, row, this.config.settings.HISTORY_LIMIT + 1);
      const actor = new ChannelActor((error) => this.log.error({ err: error, room: key }, 'room task failed'));
      room = { state, key, actor, adapter };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** A platform message: stored once, then routed in its room's order. */
  async receive(event: Inbound): Promise<void> {
    if (this.stopped) return;
    const room = this.room(event.platform, event.channel, event.direct?.agent);
    if (event.author.kind === 'agent') {
      // Our own agents' messages are usually echoes of posts still being recorded by this room's
      // actor: check them in order, after the post that produced them.
      void room.actor.enqueue(async () => {
        const stored = this.store(room, event);
        if (stored) await this.route(room, stored);
      });
      return;
    }
    const stored = this.store(room, event);
    if (!stored) return;
    if (stored.kind === 'human') room.actor.newEpoch(); // queued agent turns give way to the human
    void room.actor.enqueue(() => this.route(room, stored));
  }

  private store(room: Room, event: Inbound): RoomMessage | null {
    const kind = event.author.kind;
    // An agent's echo may be a later chunk of a long reply, recorded under the reply's first id.
    if (kind === 'agent' && room.state.seen(event.messageId)) return null;
    const stored = room.state.record({
      author: event.author.name,
      authorId: event.author.id,
      kind,
      content: event.text,
      mentions: this.mentionsIn(event.text, kind === 'agent' ? event.author.name : undefined),
      at: event.at ?? this.clock(),
      platformIds: [event.messageId],
    });
    if (!stored) this.log.debug({ room: room.key, id: event.messageId }, 'duplicate message ignored');
    return stored;
  }

  private mentionsIn(text: string, self?: string): string[] {
    return extractMentions(
      text,
      this.config.agents.map((a) => a.name),
      self,
    );
  }

  /** Decides who answers `message` and runs their turn (inside the room's actor). */
  private async route(room: Room, message: RoomMessage): Promise<void> {
    if (this.stopped || message.kind === 'system') return;
    const state = room.state.turnState;
    if (message.kind === 'agent') {
      if (state.control === 'humans') return;
      const limit = this.config.settings.TURN_LIMIT;
      if (limitReached(state, limit)) {
        await this.postSystem(room, handBackText(limit));
        room.state.setTurnState(handBack('turn limit'));
        return;
      }
    }
    const history = room.state.history();
    const before = history.filter((m) => m.id < message.id);
    const candidates = nextCandidates(this.config.agents, message, before, { directAgent: room.state.row.directAgent });
    const epoch = room.actor.epoch;
    for (const profile of candidates) {
      if (this.stopped || room.actor.epoch !== epoch) return;
      const agent = this.agent(profile.name);
      if (!agent) continue;
      const done = await this.takeTurn(room, agent, history, epoch);
      if (done) return;
    }
  }

  /** One agent's turn. Returns true when the room's loop for this message is over (posted or handed back). */
  private async takeTurn(
    room: Room,
    agent: AgentConfig,
    history: readonly RoomMessage[],
    epoch: number,
  ): Promise<boolean> {
    const controller = new AbortController();
    room.actor.inFlight.set(agent.name, controller);
    let text: string;
    let toolRuns: readonly ToolRun[];
    try {
      const output = await this.runner.run(room.adapter, {
        agent,
        channel: room.state.row.channel,
        channelKey: room.key,
        history,
        situation: room.state.row.directAgent ? 'This is a private conversation between you and one human.' : undefined,
        signal: controller.signal,
      });
      if (output.roundLimitHit) {
        await this.postReply(room, agent, output.text, output.toolRuns);
        await this.postSystem(
          room,
          `@${agent.name} stopped after ${this.config.settings.MAX_TOOL_ROUNDS} tool rounds; control is back with the humans.`,
        );
        room.state.setTurnState(handBack('tool round limit'));
        return true;
      }
      text = output.text;
      toolRuns = output.toolRuns;
    } catch (error) {
      if (controller.signal.aborted) {
        this.log.info({ room: room.key, agent: agent.name }, 'turn stopped by an operator');
        // `/pass <agent>` skips only this agent; `/pass` also started a new epoch, which ends the loop.
        return false;
      }
      this.log.error({ err: error, room: room.key, agent: agent.name }, 'agent turn failed');
      await this.postSystem(room, `@${agent.name} could not answer: ${describeError(error)}`);
      room.state.setTurnState(handBack('agent error'));
      return true;
    } finally {
      room.actor.inFlight.delete(agent.name);
    }

    const outcome = classifyReply(agent.name, text);
    if (outcome.kind === 'pass') {
      this.log.debug({ room: room.key, agent: agent.name }, 'agent passed');
      return false;
    }
    const posted = await this.postReply(room, agent, outcome.text, toolRuns);
    if (outcome.kind === 'world-pass') {
      room.state.setTurnState(handBack('world pass'));
      return true;
    }
    // A human spoke (or an operator acted) while this turn ran: the reply stands, but the loop
    // it would continue is dropped; the router decides afresh from the human's message.
    if (posted && room.actor.epoch === epoch) void room.actor.enqueueTurn(() => this.route(room, posted));
    return true;
  }

  /** Posts an agent's reply through its own identity and stores it with its platform ids. */
  private async postReply(
    room: Room,
    agent: AgentConfig,
    text: string,
    toolRuns: readonly ToolRun[],
  ): Promise<RoomMessage | null> {
    if (!text.trim()) return null;
    let ids: readonly string[];
    try {
      ids = (await room.adapter.post({ channel: room.state.row.channel, agent: agent.name, text })).messageIds;
    } catch (error) {
      this.log.error({ err: error, room: room.key, agent: agent.name }, 'posting a reply failed');
      room.state.setTurnState(handBack('post failed'));
      await this.postSystem(room, `@${agent.name}'s reply could not be posted: ${describeError(error)}`);
      return null;
    }
    const stored = room.state.record({
      author: agent.name,
      authorId: agent.name,
      kind: 'agent',
      content: text,
      mentions: this.mentionsIn(text, agent.name),
      toolRuns,
      at: this.clock(),
      platformIds: ids,
    });
    return stored;
  }

  /** Posts one of the bridge's own messages (hand-backs, errors). They wake no one and reset the counter. */
  async postSystem(room: Room, text: string): Promise<void> {
    let ids: readonly string[] = [];
    try {
      ids = (await room.adapter.post({ channel: room.state.row.channel, agent: null, text })).messageIds;
    } catch (error) {
      this.log.error({ err: error, room: room.key }, 'posting a system message failed');
    }
    room.state.record({
      author: 'system',
      authorId: 'system',
      kind: 'system',
      content: text,
      mentions: [],
      at: this.clock(),
      platformIds: ids,
    });
  }

  /** An operator command, acting on the room it was issued in. */
  async command(event: CommandEvent): Promise<string> {
    try {
      return await handleCommand(this, event);
    } catch (error) {
      this.log.error({ err: error, command: event.name }, 'command failed');
      return `/${event.name} failed: ${describeError(error)}`;
    }
  }
}

export function createBridge(options: BridgeOptions): Bridge {
  return new Bridge(options);
}
