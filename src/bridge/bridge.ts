import type { AgentConfig, Config } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import type { AdapterSink, ChatAdapter, CommandEvent, Inbound, Outbound, Sandbox, StreamingPost } from '../ports.js';
import { isNoProgress } from '../room/guards.js';
import { extractMentions, handBack, handBackText, limitReached } from '../room/index.js';
import { requestsOf, type Thread } from '../room/threads.js';
import type { RoomMessage, ToolRun } from '../room/types.js';
import type { Store } from '../store/index.js';
import { AgentRunner, defaultLlmFactory, type LlmFactory } from './agent-runner.js';
import { ChannelActor } from './channel-actor.js';
import { handleCommand } from './commands.js';
import { Conductor } from './conductor.js';
import { PRIVATE_PLATFORM, PrivateRooms } from './messaging.js';
import { RoomState } from './room-state.js';
import { ThreadBook } from './thread-book.js';

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

/** A room as the bridge tracks it: its persistent state, its actor, its adapter. */
export interface Room {
  readonly state: RoomState;
  readonly key: string;
  readonly actor: ChannelActor;
  readonly adapter: ChatAdapter;
  /** Posts under way in this room, until their platform ids are stored (echoes wait for them). */
  readonly posting: Set<Promise<unknown>>;
}

export interface PostOptions {
  /** Who this message asks for a reply, when the caller decides (messaging actions). */
  readonly requests?: string[];
  /** The reply was shown while written: finish it instead of posting anew. */
  readonly stream?: StreamingPost | undefined;
}

/** Messages kept in memory per room: the context window, and enough for the pair guard. */
const MIN_WINDOW = 64;

/**
 * The imperative shell around room/: dedupe and persistence, one serial actor per room, thread
 * bookkeeping, hand-backs and operator commands. Who speaks is decided by the Conductor.
 */
export class Bridge {
  readonly sink: AdapterSink;
  readonly rooms = new Map<string, Room>();
  readonly threads: ThreadBook;
  readonly runner: AgentRunner;
  readonly clock: () => number;
  private readonly adapters = new Map<string, ChatAdapter>();
  readonly conductor: Conductor;
  private stopped = false;

  constructor(readonly options: BridgeOptions) {
    const privateRooms = new PrivateRooms((message) => this.mirrorPrivate(message));
    for (const adapter of [...options.adapters, privateRooms]) this.adapters.set(adapter.platform, adapter);
    this.runner = new AgentRunner(options.config, options.llm ?? defaultLlmFactory(options.config), options.sandbox);
    this.clock = options.clock ?? Date.now;
    this.conductor = new Conductor(this);
    this.threads = new ThreadBook(options.store.threads, this.clock, (thread) => this.conductor.expire(thread));
    this.sink = {
      receive: (event) => this.receive(event),
      command: (event) => this.command(event),
      lastMessageId: (platform, channel) => options.store.lastPlatformMessageId(platform, channel),
      settled: async (platform, channel) => {
        await this.rooms.get(`${platform}:${channel}`)?.actor.idle();
      },
      directRooms: (platform) =>
        options.store
          .channels()
          .filter((c) => c.platform === platform && c.directAgent)
          .map((c) => ({ channel: c.channel, agent: c.directAgent ?? '' })),
    };
  }

  get config(): Config {
    return this.options.config;
  }

  get log(): Logger {
    return this.options.logger;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  async start(): Promise<void> {
    for (const adapter of this.adapters.values()) await adapter.start(this.sink);
    // Threads a previous run left behind: deadlines re-armed, due resumes run.
    for (const thread of this.threads.load()) this.conductor.restore(thread);
  }

  /** Stops every turn, then the adapters and the sandbox. The store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.threads.close();
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
      const size = Math.max(this.config.settings.HISTORY_LIMIT + 1, MIN_WINDOW);
      const state = new RoomState(this.options.store, row, size);
      const actor = new ChannelActor((error) => this.log.error({ err: error, room: key }, 'room task failed'));
      room = { state, key, actor, adapter, posting: new Set() };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** The room with this key (`platform:channel`), if its platform is connected. */
  roomByKey(key: string): Room | undefined {
    const at = key.indexOf(':');
    if (at < 0 || !this.adapters.has(key.slice(0, at))) return undefined;
    return this.room(key.slice(0, at), key.slice(at + 1));
  }

  /** A platform message: stored once, then handled in its room's order. */
  async receive(event: Inbound): Promise<void> {
    if (this.stopped) return;
    const room = this.room(event.platform, event.channel, event.direct?.agent);
    if (event.author.kind === 'agent') {
      // Our own agents' messages are usually echoes of posts still being recorded by this room's
      // actor: check them in order, after the post that produced them.
      const epoch = room.actor.epoch;
      void room.actor.enqueue(async () => {
        // A post to this room from another room's turn may still be on its way to the store.
        if (room.posting.size > 0) await Promise.allSettled([...room.posting]);
        const stored = this.recordInbound(room, event);
        if (stored) this.afterRecord(room, stored, epoch);
      });
      return;
    }
    const stored = this.recordInbound(room, event);
    if (!stored) return;
    if (stored.kind === 'human') room.actor.newEpoch(); // queued agent turns give way to the human
    this.afterRecord(room, stored, room.actor.epoch);
  }

  private recordInbound(room: Room, event: Inbound): RoomMessage | null {
    // An agent's echo may be a later chunk of a long reply, recorded under the reply's first id.
    if (event.author.kind === 'agent' && room.state.seen(event.messageId)) return null;
    const stored = this.record(room, {
      author: event.author.name,
      authorId: event.author.id,
      kind: event.author.kind,
      text: event.text,
      at: event.at ?? this.clock(),
      platformIds: [event.messageId],
    });
    if (!stored) this.log.debug({ room: room.key, id: event.messageId }, 'duplicate message ignored');
    return stored;
  }

  /** Stores a message once, with its mentions and the replies it asks for. */
  record(
    room: Room,
    message: {
      author: string;
      authorId: string;
      kind: RoomMessage['kind'];
      text: string;
      at: number;
      platformIds: readonly string[];
      toolRuns?: readonly ToolRun[];
      /** Who this message asks for a reply, when the caller decides (messaging actions). */
      requests?: string[];
    },
  ): RoomMessage | null {
    const isAgent = message.kind === 'agent';
    const mentions =
      message.kind === 'system'
        ? []
        : extractMentions(
            message.text,
            this.config.agents.map((a) => a.name),
            isAgent ? message.author : undefined,
          );
    let requests: string[] | undefined = message.requests;
    if (isAgent && !requests) {
      const answering = this.threads.awaiting(room.key, message.author);
      const previous = this.previousOwn(room, message.author);
      requests = isNoProgress(message.text, previous) ? [] : requestsOf(mentions, message.author, answering);
    }
    return room.state.record({
      author: message.author,
      authorId: message.authorId,
      kind: message.kind,
      content: message.text,
      mentions,
      ...(requests ? { requests } : {}),
      ...(message.toolRuns ? { toolRuns: message.toolRuns } : {}),
      at: message.at,
      platformIds: message.platformIds,
    });
  }

  /** The author's previous message text in the room (for the no-progress guard). */
  previousOwn(room: Room, author: string, before = Number.POSITIVE_INFINITY): string | undefined {
    const history = room.state.history();
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (m && m.id < before && m.kind === 'agent' && m.author.toLowerCase() === author.toLowerCase()) {
        return m.content;
      }
    }
    return undefined;
  }

  /** What happens after a message is stored: thread bookkeeping, the turn limit, then routing. */
  afterRecord(room: Room, message: RoomMessage, epoch: number): void {
    if (this.stopped || message.kind === 'system') return;
    if (message.kind === 'human') {
      const completed = this.conductor.humanAnswer(room, message);
      void room.actor.enqueue(() => this.conductor.route(room, message, completed));
      return;
    }
    const state = room.state.turnState;
    if (state.control === 'humans') return;
    const limit = this.config.settings.TURN_LIMIT;
    if (limitReached(state, limit)) {
      void room.actor.enqueue(() => this.handBack(room, 'turn limit', handBackText(limit)));
      room.state.setTurnState(handBack('turn limit'));
      return;
    }
    this.conductor.afterAgentMessage(room, message, epoch);
  }

  /**
   * Control goes back to the humans: queued turns dropped, the room's threads cancelled,
   * optionally a message saying why.
   */
  async handBack(room: Room, reason: string, text?: string): Promise<void> {
    metrics.handBacks.inc({ reason });
    room.actor.newEpoch();
    room.state.setTurnState(handBack(reason));
    this.closeThreads(room);
    if (text) await this.postSystem(room, text); // a system message keeps control with the humans
  }

  /** Runs a post-and-store in a room, visible to echoes arriving meanwhile. */
  private async tracked<T>(room: Room, work: () => Promise<T>): Promise<T> {
    const done = work();
    room.posting.add(done);
    try {
      return await done;
    } finally {
      room.posting.delete(done);
    }
  }

  /** Cancels the room's requests; requesters waiting in other rooms resume with what they have. */
  closeThreads(room: Room): void {
    for (const thread of this.threads.cancelFor(room.key)) this.conductor.queueResume(thread);
  }

  /** Posts an agent's message through its own identity and stores it with its platform ids. */
  postAgent(
    room: Room,
    agent: AgentConfig,
    text: string,
    toolRuns: readonly ToolRun[],
    options: PostOptions = {},
  ): Promise<RoomMessage | null> {
    return this.tracked(room, () => this.postAgentNow(room, agent, text, toolRuns, options));
  }

  private async postAgentNow(
    room: Room,
    agent: AgentConfig,
    text: string,
    toolRuns: readonly ToolRun[],
    { requests, stream }: PostOptions,
  ): Promise<RoomMessage | null> {
    if (!text.trim()) {
      await stream?.cancel().catch(() => {});
      return null;
    }
    let ids: readonly string[];
    try {
      const posted = stream
        ? await stream.finish(text)
        : await room.adapter.post({ channel: room.state.row.channel, agent: agent.name, text });
      ids = posted.messageIds;
    } catch (error) {
      this.log.error({ err: error, room: room.key, agent: agent.name }, 'posting a reply failed');
      await this.handBack(room, 'post failed', `@${agent.name}'s reply could not be posted: ${describeError(error)}`);
      return null;
    }
    return this.record(room, {
      author: agent.name,
      authorId: agent.name,
      kind: 'agent',
      text,
      toolRuns,
      at: this.clock(),
      platformIds: ids,
      ...(requests ? { requests } : {}),
    });
  }

  /** Posts one of the bridge's own messages (hand-backs, errors). They wake no one and reset the counter. */
  postSystem(room: Room, text: string): Promise<void> {
    return this.tracked(room, () => this.postSystemNow(room, text));
  }

  private async postSystemNow(room: Room, text: string): Promise<void> {
    let ids: readonly string[] = [];
    try {
      ids = (await room.adapter.post({ channel: room.state.row.channel, agent: null, text })).messageIds;
    } catch (error) {
      this.log.error({ err: error, room: room.key }, 'posting a system message failed');
    }
    this.record(room, {
      author: 'system',
      authorId: 'system',
      kind: 'system',
      text,
      at: this.clock(),
      platformIds: ids,
    });
  }

  /**
   * Shows a private agent chat message in the operators' log room (PRIVATE_CHAT_LOG, a room key).
   * It is not stored in that room's history, so no agent there reads it; its platform id is kept
   * so its echo is recognised.
   */
  private async mirrorPrivate(message: Outbound): Promise<void> {
    const key = this.config.settings.PRIVATE_CHAT_LOG;
    const room = key ? this.roomByKey(key) : undefined;
    if (!room || room.state.row.platform === PRIVATE_PLATFORM) return;
    const pair = message.channel.replace('+', ' <-> ');
    const text = `[private chat ${pair}] ${message.agent ? `@${message.agent}` : 'system'}: ${message.text}`;
    try {
      const posted = await this.tracked(room, async () => {
        const result = await room.adapter.post({ channel: room.state.row.channel, agent: null, text });
        room.state.remember(result.messageIds);
        return result;
      });
      this.log.debug({ room: room.key, ids: posted.messageIds }, 'private chat mirrored');
    } catch (error) {
      this.log.warn({ err: error, room: room.key }, 'mirroring a private chat message failed');
    }
  }

  /** The frame for a normal wake: a DM, a human's direct request, or a message to observe. */
  situationFor(room: Room, message: RoomMessage, agent: AgentConfig): Situation {
    if (room.state.row.directAgent) return { kind: 'direct', user: message.author };
    if (message.kind === 'human' && message.mentions.some((m) => m.toLowerCase() === agent.name.toLowerCase())) {
      return { kind: 'requested', requester: message.author };
    }
    return { kind: 'observe' };
  }

  /** Threads involving a room, for /status. */
  threadsOf(room: Room): Thread[] {
    return this.threads.all().filter((t) => t.originRoom === room.key || t.targetRoom === room.key);
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
