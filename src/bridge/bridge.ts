import { type Config, replicaId } from '../config/index.js';
import { EmbeddingWorker } from '../llm/embedding-worker.js';
import { defaultLlmFactory, type LlmFactory } from '../llm/llm-factory.js';
import { embedderFor, storeServices } from '../llm/turn-services.js';
import type { Logger } from '../log.js';
import { McpPool } from '../mcp/pool.js';
import { reportSpend } from '../metrics.js';
import type { AdapterSink, ChatAdapter, Sandbox } from '../ports.js';
import { SpendLimitError, SpendMeter } from '../spend/meter.js';
import type { StorePort } from '../store/port.js';
import { type Backoff, capped, DEFAULT_BACKOFF } from './backoff.js';
import { Approvals } from './executors/approvals.js';
import { BatchTurns } from './executors/batch-turns.js';
import { Calls } from './executors/calls.js';
import { effectsRunner } from './executors/effects.js';
import { RoomActions } from './executors/messaging.js';
import { Poster } from './executors/poster.js';
import { Previews } from './executors/previews.js';
import { PrivateChats } from './executors/private-chats.js';
import { chatLog, PrivateRooms } from './executors/private-rooms.js';
import { processScheduler, type Scheduler, Timers } from './executors/timers.js';
import { Turns } from './executors/turns.js';
import { AccessGate } from './inbound/access-gate.js';
import { accessPolicy, expectedIn, tellOne } from './inbound/access-wiring.js';
import { CatchUpMarks } from './inbound/catch-up-marks.js';
import { Commands } from './inbound/commands.js';
import { Notices } from './inbound/notices.js';
import { Reception } from './inbound/reception.js';
import { Uploads } from './inbound/uploads.js';
import { RequestIds } from './loop/request-ids.js';
import { roomSetup } from './loop/room-setup.js';
import { encodingsOf, RoomWindows } from './loop/room-window.js';
import { Rooms } from './loop/rooms.js';
import { StoreOutage } from './loop/store-outage.js';
import { handoverFor } from './replicas/handover.js';
import { LeaseKeeper } from './replicas/leases.js';
import { liveReplicas, registryFor } from './replicas/registry.js';
import { onSignal, Relay } from './replicas/relay.js';
import { Bridge } from './running.js';
import { budgetText } from './views/budget.js';
import { Overview } from './views/overview.js';
import { statusText } from './views/status.js';

export interface BridgeOptions {
  readonly config: Config;
  readonly store: StorePort;
  readonly sandbox: Sandbox;
  readonly adapters: readonly ChatAdapter[];
  readonly logger: Logger;
  /** Builds each agent's LLM client (default: the OpenAI SDK against the agent's endpoint). */
  readonly llm?: LlmFactory;
  readonly clock?: () => number;
  /** The waits between tries of what failed for a reason that passes: a store write, a post (default 1 s to 60 s). */
  readonly backoff?: Backoff;
  /** Runs the requests' deadlines (default: timers of the process, by `clock`). */
  readonly scheduler?: Scheduler;
}

/** Messages kept in a turn's view of its room: the context window, at least. */
const MIN_WINDOW = 64;
/** The longest wait between tries at opening the store's listening connection again (replicas). */
const LISTEN_RETRY_MAX_MS = 2_000;

/** Builds the shell's collaborators, each with only what it needs, in dependency order. */
export function createBridge(options: BridgeOptions): Bridge {
  const { config, store, sandbox, logger: log } = options;
  const { settings, agents } = config;
  const clock = options.clock ?? Date.now;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const window = Math.max(settings.HISTORY_LIMIT + 1, MIN_WINDOW);
  // Each room's window in memory, its messages counted once: what the room's loop commits and its turns read.
  const windows = new RoomWindows({ store: store.rooms, size: window, encodings: encodingsOf(agents), log });
  const roomStore = windows.store();

  const ids = new RequestIds({ blocks: store.requestIds, log });
  let ready: () => void = () => {};
  const connected = new Promise<void>((resolve) => {
    ready = resolve;
  });

  const calls = new Calls();
  const timers = new Timers(options.scheduler ?? processScheduler(clock));
  const leases = store.leases;
  const replica = leases ? replicaId(settings) : undefined;
  const ttlMs = settings.ROOM_LEASE_S * 1000;
  const replicas = replica === undefined ? undefined : { replica, liveMs: ttlMs };
  const spend = new SpendMeter({ store: store.spend, settings, agents, clock, log, replicas });
  reportSpend(() => spend.snapshot());
  const embedder = embedderFor(settings);
  const embedMeter = (room: string, model: string) => spend.forEmbeddings(room, model);
  const services = storeServices(store, config, log, clock, embedMeter, embedder, (room) => spend.forSummaries(room));
  const embedding: EmbeddingWorker | undefined = embedder
    ? new EmbeddingWorker({
        embedder,
        vectors: store.embeddings,
        meter: (room) => embedMeter(room, embedder.model),
        refusal: (error) => (error instanceof SpendLimitError ? { until: error.reached.until } : undefined),
        // With replicas, each embeds its own rooms' messages only (no message embedded, and paid, twice).
        serves: replica === undefined ? undefined : (room: string): boolean => rooms.serves(room),
        batch: settings.EMBEDDINGS_BATCH,
        concurrency: settings.EMBEDDINGS_CONCURRENCY,
        clock,
        log,
      })
    : undefined;
  const llm = options.llm ?? defaultLlmFactory(config, log);
  const adapters = new Map<string, ChatAdapter>(options.adapters.map((adapter) => [adapter.platform, adapter]));
  const privateRooms = new PrivateRooms(chatLog(settings.PRIVATE_CHAT_LOG, adapters, log));
  adapters.set(privateRooms.platform, privateRooms);
  // A store several bridges may share (Postgres): each records itself among the replicas, and serves a room only
  // under its lease.
  const registry = registryFor(store, replica, { workspaces: settings.SANDBOX_WORKSPACES, sandbox, ttlMs, log });
  const lease =
    store.leases && replica !== undefined
      ? new LeaseKeeper({
          leases: store.leases,
          replica,
          ttlMs,
          clock,
          log,
          beat: registry ? () => registry.beat() : undefined,
        })
      : undefined;
  // A room whose lease is lost is another bridge's: its window here is stale from now on.
  lease?.onLost((roomId) => windows.drop(roomId));
  // With bridges sharing the store, commands and agents' actions for rooms another one serves are handed on there.
  const handed =
    lease && store.commands ? new Relay({ port: store.commands, replica: lease.replica, clock }) : undefined;

  const notices = new Notices({ adapters, log });
  const access = new AccessGate({
    policy: accessPolicy(config),
    dm: settings.DM_POLICY,
    store: store.access,
    agents: agents.map((a) => a.name),
    tell: (platform, channel, agent, text) => notices.post(platform, channel, text, agent),
    clock,
    log,
    codeMinutes: settings.PAIRING_CODE_MINUTES,
    expected: (platform, channel, agent, person) =>
      expectedIn({ rooms, store: store.rooms }, platform, channel, agent, person),
  });
  const outage = new StoreOutage({
    max: settings.HELD_MESSAGES_MAX,
    backoff,
    notice: (platform, channel, text) => notices.post(platform, channel, text),
    ping: () => store.ping(),
    clock,
    log,
  });
  const marks = new CatchUpMarks(store.rooms, log);
  const rooms = new Rooms({
    store: store.rooms,
    adapters,
    config,
    actor: { store: roomStore, ids, outage, clock, log, embedding, marks },
    lease,
    journal: store.tools,
  });
  // How agents' actions reach their rooms (here, or the bridge serving them), and private chats' requests.
  const actions = new RoomActions({ calls, handed, rooms });
  const chats = new PrivateChats({ agents, chats: store.chats, actions, clock });
  const batches =
    settings.BATCHING === 'on'
      ? new BatchTurns({
          agents,
          llm,
          rooms: roomStore,
          window,
          settings,
          sources: services,
          chats,
          log,
          spend,
        })
      : undefined;
  const previews = new Previews();
  const approvals = new Approvals(log, settings.ACTING_CHECK === 'on');
  const mcp = new McpPool({
    sandbox,
    log,
    tell: (room, line) => void notices.post(room.slice(0, room.indexOf(':')), room.slice(room.indexOf(':') + 1), line),
  });
  const turns = new Turns({
    config,
    llm,
    sandbox,
    services,
    rooms: roomStore,
    journal: store.tools,
    window,
    messaging: { agents, actions, chats, rooms },
    chats,
    spend,
    previews,
    approvals,
    mcp,
    clock,
    log,
  });
  const poster = new Poster({
    previews,
    ready: connected,
    serving: lease ? (roomId) => lease.fence(roomId) !== undefined : undefined,
    backoff,
    clock,
    log,
  });
  rooms.carryOut(
    effectsRunner({
      turns,
      batches,
      poster,
      previews,
      timers,
      approvals,
      calls,
      sandbox,
      mcp,
      rooms: roomStore,
      status: async (key) => {
        const actor = await rooms.byKey(key);
        if (!actor) return `Room ${key} is not served here.`;
        return statusText(
          {
            agents,
            store,
            sandbox,
            spend,
            working: (room) => turns.working(room),
            waiting: (room) => poster.waiting(room),
            clock,
            replica: lease?.replica,
            replicas: registry && leases ? () => liveReplicas(registry, leases) : undefined,
            access: (platform) => (access.gates(platform) ? access.describe({ platform }) : undefined),
            mcp: (room) => mcp.status(room, agents),
          },
          actor,
        );
      },
      budget: (key, args) =>
        budgetText({ meter: spend, agents, settings, timeZone: settings.SPEND_TZ, clock }, key, args),
      tell: async (room, user, text) => {
        if (access.shouldTell(room.platform, room.channel, user.id)) await tellOne(adapters, notices, room, user, text);
      },
      log,
    }),
  );
  const overview = new Overview({
    config,
    store,
    sandbox,
    live: () => rooms.all(),
    setup: (record) => roomSetup(config, record),
    working: (room) => turns.working(room),
    clock,
    spend: () => spend.lines(undefined),
    access: () => access.describe({ platform: 'discord' }),
    mcp: (room) => mcp.status(room, agents),
  });
  const uploads = new Uploads({
    sandbox,
    settings,
    logger: log,
    stored: async (event) => {
      const actor = await rooms.get(event.platform, event.channel, event.direct?.agent);
      return store.rooms.seen(actor.record.id, event.messageId);
    },
  });
  // With bridges sharing the store, commands are claimed there by their platform id.
  const live = registry ? (id: string) => registry.isLive(id) : undefined;
  const commands = new Commands({ rooms, calls, log, clock, handed, adapters, live, access });
  const reception = new Reception({
    rooms,
    store: store.rooms,
    inbox: lease ? store.inbox : undefined,
    uploads,
    poster,
    marks,
    notices,
    outage,
    access,
    clock,
    log,
  });

  const sink: AdapterSink = {
    // Every platform's messages and commands pass here: each human message and command opens its trace.
    receive: reception.arrive.bind(reception),
    command: commands.arrive.bind(commands),
    settled: async (platform, channel) => {
      const actor = await rooms.byKey(`${platform}:${channel}`);
      await actor?.idle();
    },
    working: (platform, channel) => turns.working(`${platform}:${channel}`),
    transcript: (room, page) => overview.transcript(room, page),
    overview: () => overview.read(),
    decisions: (room, from, to) => overview.decisions(room, from, to),
    ...marks.sink(rooms),
  };
  const handover = handoverFor(store, lease, {
    ttlMs,
    adopt: async (record) => {
      const actor = await rooms.adopt(record);
      // Its messages not embedded yet are this bridge's to embed now.
      if (actor) embedding?.wake();
      return actor;
    },
    receive: reception.handedOver.bind(reception),
    caughtUp: (room) => rooms.caughtUp(room),
    abandoned: () => spend.settleDead(),
    commands: () => commands.takeWaiting(),
    note: (note) => rooms.note(note),
    log,
  });
  const signals = lease ? store.signals : undefined;
  return new Bridge(log, sink, {
    adapters: [...adapters.values()],
    store,
    rooms,
    marks,
    ids,
    ready,
    journal: store.tools,
    lease,
    registry,
    handover,
    stoppers: [
      () => outage.stop(),
      () => reception.stop(),
      () => commands.stop(),
      ...(handed ? [() => handed.stop()] : []),
      () => poster.stop(),
      () => turns.stopAll(),
      () => void mcp.close(),
      () => timers.stop(),
      ...(batches ? [() => batches.stopAll()] : []),
      ...(embedding ? [() => embedding.stop()] : []),
    ],
    embedding,
    sandbox,
    spend,
    policy: {
      apply: (read) => {
        access.update(accessPolicy(read), read.settings.DM_POLICY);
        approvals.update(read.agents);
      },
    },
    // Replicas on Postgres: a signal makes the handover look at once (its regular look stays, for a missed one).
    // A wait grown to a minute through a long outage would leave the bridge deaf that long after the database is back.
    listen:
      signals && handover
        ? () => signals.listen(onSignal(handover, handed), { log, backoff: capped(backoff, LISTEN_RETRY_MAX_MS) })
        : undefined,
  });
}
