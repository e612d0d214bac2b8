import type { Config } from '../config/index.js';
import { describeError } from '../errors.js';
import { storeServices } from '../llm/turn-services.js';
import type { Logger } from '../log.js';
import type { AdapterSink, ChatAdapter, CommandEvent, Inbound, Outbound, Sandbox } from '../ports.js';
import { NOT_A_REPLY } from '../room/types.js';
import { redact } from '../secrets.js';
import type { Store } from '../store/index.js';
import { AgentRunner, defaultLlmFactory, type LlmFactory } from './agent-runner.js';
import { AgentTurns } from './agent-turns.js';
import { BatchTurns } from './batch-turns.js';
import { catchUpMarks } from './catch-up-marks.js';
import { handleCommand } from './commands.js';
import { Conductor } from './conductor.js';
import { Edits } from './edits.js';
import { handBackWith } from './hand-back.js';
import { LoopGuards } from './loop-guards.js';
import { RoomMessaging } from './messaging.js';
import { Poster } from './poster.js';
import { PrivateChats } from './private-chats.js';
import { PRIVATE_PLATFORM, PrivateRooms } from './private-rooms.js';
import { Reception } from './reception.js';
import { Recorder } from './recorder.js';
import { Recovery } from './recovery.js';
import { RequestTurns } from './request-turns.js';
import { Requests } from './requests.js';
import { type Room, Rooms } from './rooms.js';
import { TurnRunner } from './turn-runner.js';
import { Uploads } from './uploads.js';

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

/**
 * The running shell: starts and stops the adapters, offers them the sink, and waits for rooms to
 * settle. Its collaborators are built and wired in createBridge; none of them sees this object.
 */
export class Bridge {
  private stopped = false;

  constructor(
    readonly log: Logger,
    readonly sink: AdapterSink,
    private readonly parts: {
      readonly adapters: readonly ChatAdapter[];
      readonly rooms: Rooms;
      readonly requests: Requests;
      readonly recovery: Recovery;
      readonly stoppables: ReadonlyArray<{ stop(): void }>;
      readonly sandbox: Sandbox;
    },
  ) {}

  /**
   * Connects the adapters and resumes what a previous run left: its unsent posts go out first (before
   * anything else in their rooms), then the adapters catch up on what was missed, then cut rounds go on
   * and requests still waiting ask their agents again.
   */
  async start(): Promise<void> {
    const { adapters, requests, recovery } = this.parts;
    requests.load();
    let connected: (up: boolean) => void = () => {};
    const ready = new Promise<boolean>((resolve) => {
      connected = resolve;
    });
    const delivered = recovery.deliver(ready);
    try {
      for (const adapter of adapters) await adapter.start(this.sink);
    } catch (error) {
      connected(false);
      throw error;
    }
    connected(true);
    await delivered;
    for (const adapter of adapters) {
      await adapter.catchUpRooms?.().catch((error: unknown) => this.log.warn({ err: error }, 'catch-up failed'));
    }
    recovery.resume();
    requests.restore();
  }

  /** Stops every turn, then the adapters and the sandbox. The store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const part of this.parts.stoppables) part.stop();
    const rooms = this.parts.rooms.all();
    for (const room of rooms) room.actor.stop();
    await Promise.allSettled(rooms.map((room) => room.actor.idle()));
    for (const adapter of this.parts.adapters) {
      await adapter.stop().catch((error: unknown) => this.log.warn({ err: error }, 'adapter stop failed'));
    }
    await this.parts.sandbox.close().catch((error: unknown) => this.log.warn({ err: error }, 'sandbox close failed'));
  }

  /** Resolves when every room has nothing queued or running. */
  idle(): Promise<void> {
    return this.parts.rooms.idle();
  }
}

/** Builds the shell's collaborators, each with only what it needs, and wires them. */
export function createBridge(options: BridgeOptions): Bridge {
  const { config, store, sandbox, logger: log } = options;
  const settings = config.settings;
  const clock = options.clock ?? Date.now;
  const agents = config.agents;
  const isAgent = (name: string) => agents.some((a) => a.name.toLowerCase() === name.toLowerCase());

  const adapters = new Map<string, ChatAdapter>();
  const privateRooms = new PrivateRooms((message) => mirrorPrivate(message));
  for (const adapter of [...options.adapters, privateRooms]) adapters.set(adapter.platform, adapter);
  const rooms = new Rooms({
    store,
    adapters,
    historyLimit: settings.HISTORY_LIMIT,
    privacy: (key) => (settings.PRIVACY_ROOMS.includes(key) ? 'mentions' : settings.PRIVACY),
    log,
  });
  const recorder = new Recorder(agents.map((a) => a.name));
  const { journal } = store;
  const transaction = <T>(work: () => T): T => store.transaction(work);
  const poster = new Poster({
    recorder,
    journal,
    transaction,
    stored: (room, id) => store.messageByPlatformId(room.state.row.id, id),
    clock,
    log,
  });
  const guards = new LoopGuards({
    isAgent,
    clock,
    notify: (room, text) => void room.actor.enqueue(() => poster.system(room, text)),
  });

  // The requests and the turns they call for need each other's work: the requests are given functions.
  let conductor: Conductor | undefined;
  let requestTurns: RequestTurns | undefined;
  const requests = new Requests({
    store: store.threads,
    clock,
    timeoutMs: settings.REPLY_TIMEOUT_S * 1000,
    handlers: {
      ask: (thread, agent) => requestTurns?.ask(thread, agent),
      resume: (thread) => requestTurns?.queueResume(thread),
      expired: (thread) => requestTurns?.expired(thread),
    },
  });
  const afterPost = (room: Room, message: Parameters<Conductor['agentMessage']>[1]) =>
    conductor?.agentMessage(room, message, NOT_A_REPLY, true);

  const services = storeServices(store, config, options.logger, clock);
  const llm = options.llm ?? defaultLlmFactory(config, log);
  const runner = new AgentRunner(config, llm, sandbox, services);
  let privateChats: PrivateChats | undefined;
  const turnRunner: TurnRunner = new TurnRunner({
    runner,
    messagingFor: (room, agent, replyTo) =>
      new RoomMessaging(
        { agents, rooms, poster, requests, chats: store.chats, privateChats: chats(), clock, afterPost },
        room,
        agent,
        replyTo,
      ),
    notes: (agent) => chats().notes(agent),
    journal,
    clock,
    log,
  });
  const chats = (): PrivateChats => {
    privateChats ??= new PrivateChats({
      agents,
      chats: store.chats,
      rooms,
      turns: turnRunner,
      poster,
      afterPost,
      clock,
      ttlMs: settings.CHAT_REQUEST_TIMEOUT_S * 1000,
      log,
    });
    return privateChats;
  };
  const handBack = handBackWith({ requests, poster, log });
  const turns = new AgentTurns({
    runner: turnRunner,
    poster,
    requests,
    guards,
    handBack,
    journal,
    transaction,
    maxToolRounds: settings.MAX_TOOL_ROUNDS,
    afterPost: (room, message, replyTo, route, epoch) => conductor?.agentMessage(room, message, replyTo, route, epoch),
    clock,
    log,
  });
  requestTurns = new RequestTurns({ agents, rooms, requests, turns, runner: turnRunner, guards });
  const batch =
    settings.BATCHING === 'on'
      ? new BatchTurns({ agents, turns, guards, llm, settings, sources: services, notes: (a) => chats().notes(a), log })
      : undefined;
  conductor = new Conductor({
    agents,
    turnLimit: settings.TURN_LIMIT,
    rooms,
    requests,
    turns,
    batch,
    runner: turnRunner,
    guards,
    handBack,
    journal,
    message: (room, id) => store.message(room.state.row.id, id),
    clock,
    log,
  });
  const edits = new Edits({
    rooms,
    agents: agents.map((a) => a.name),
    clock,
    windowMs: settings.EDIT_WAKE_MINUTES * 60_000,
    addressedBy: (channelId, platformId) => store.addressedBy(channelId, platformId),
    wake: (room, message, exclude) => conductor?.edited(room, message, exclude),
  });
  const uploads = new Uploads({
    sandbox,
    settings,
    logger: log,
    stored: (event) => rooms.get(event.platform, event.channel, event.direct?.agent).state.seen(event.messageId),
  });
  const reception = new Reception({
    rooms,
    recorder,
    conductor,
    transaction,
    edits,
    uploads,
    clock,
    log,
    notice: async (platform, channel, text) =>
      adapters.get(platform)?.post({ channel, agent: null, text: redact(text) }),
  });
  const recovery = new Recovery({
    journal,
    channels: () => store.channels(),
    rooms,
    turns,
    resumeRound: (room, id, messageId) => conductor?.resumeRound(room, id, messageId),
    message: (room, id) => store.message(room.state.row.id, id),
    newestHuman: (room) => store.newestHumanId(room.state.row.id),
    log,
  });

  /**
   * Shows a private agent chat message in the operators' log room (PRIVATE_CHAT_LOG, a room key). It
   * is not stored in that room's history, so no agent there reads it.
   */
  async function mirrorPrivate(message: Outbound): Promise<void> {
    const key = settings.PRIVATE_CHAT_LOG;
    const room = key ? rooms.byKey(key) : undefined;
    if (!room || room.state.row.platform === PRIVATE_PLATFORM) return;
    const pair = message.channel.replace('+', ' <-> ');
    const text = `[private chat ${pair}] ${message.agent ? `@${message.agent}` : 'system'}: ${message.text}`;
    await poster.unrecorded(room, text).catch((error: unknown) => {
      log.warn({ err: error, room: room.key }, 'mirroring a private chat message failed');
    });
  }

  const commandDeps = {
    agents,
    turnLimit: settings.TURN_LIMIT,
    rooms,
    store,
    sandbox,
    clock,
    threadsOf: (room: Room) => requests.ofRoom(room.key),
    closeRequests: (room: Room) => {
      requests.handBack(room.key);
      journal.dropRounds(room.key); // what an operator stopped is not resumed after a restart
    },
    forgetGuards: (room: Room) => guards.forget(room),
  };
  const sink: AdapterSink = {
    receive: (event: Inbound) => reception.receive(event),
    command: async (event: CommandEvent) => {
      try {
        return redact(await handleCommand(commandDeps, event));
      } catch (error) {
        log.error({ err: error, command: event.name }, 'command failed');
        return `/${event.name} failed: ${describeError(error)}`;
      }
    },
    settled: async (platform, channel) => {
      await rooms.byKey(`${platform}:${channel}`)?.actor.idle();
    },
    working: (platform, channel) => [...(rooms.byKey(`${platform}:${channel}`)?.actor.inFlight.keys() ?? [])],
    // The backlog a catch-up fetched is answered as one conversation once its mark is recorded.
    ...catchUpMarks(store, (key) => recovery.resume(key), log),
  };
  return new Bridge(log, sink, {
    adapters: [...adapters.values()],
    rooms,
    requests,
    recovery,
    stoppables: [reception, conductor, requestTurns, requests, ...(batch ? [batch] : [])],
    sandbox,
  });
}
