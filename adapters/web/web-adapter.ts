/**
 * The web room (WEB_PORT): platform `web`, one room per name in WEB_ROOMS, routed by the same rules as every other
 * platform. The adapter is the platform here: what people send reaches the bridge as messages, and what the bridge
 * posts (through the shared reply procedure) is shown on every open page of the room — agents' replies while they
 * are written, tool runs as they end, the bridge's lines set apart.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../src/config/index.js';
import { AdapterError, ConfigError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { packagePath } from '../../src/paths.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted, PostOptions, StreamingPost } from '../../src/ports.js';
import type { PeoplePort } from '../../src/store/port.js';
import { ReplyPoster, type ReplyTarget } from '../shared/reply-posting.js';
import { EditStream, type StreamClock, systemClock } from '../shared/streaming-post.js';
import { Access } from './access.js';
import { Connections, WEB_PLATFORM } from './connections.js';
import { RoomFeed } from './feed.js';
import { HeldFiles } from './held-files.js';
import { hostName, plainAddress } from './http.js';
import { type PostableRoom, webDesk } from './mcp-desk.js';
import { McpEndpoint } from './mcp-endpoint.js';
import { OpsApi } from './ops-api.js';
import type { WireMessage } from './protocol.js';
import { RateLimit } from './rate-limit.js';
import { MAX_FRAME_BYTES, WebServer } from './server.js';
import { toolStatus } from './tool-status.js';

/** One web message holds this much; a longer reply is cut by the shared procedure (MAX_REPLY_POSTS). */
const MESSAGE_LIMIT = 40_000;
/** A tool's output shown on the page, at most. */
const TOOL_OUTPUT_SHOWN = 20_000;
/** Uploads held for their messages together hold at most this many times WEB_MAX_FILE_MB. */
const HELD_FILES = 5;
/** How often open pages' sessions are checked (a revoked person's pages close within this). */
const SESSION_CHECK_MS = 1000;
/** How often each page gets a beat and a ping, by default (a connection that misses one is ended). */
const BEAT_MS = 20_000;

export interface WebAdapterOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly people: PeoplePort;
  readonly clock?: () => number;
  /** Least milliseconds between two updates of a reply being written (default 50). */
  readonly streamIntervalMs?: number;
  /** Milliseconds between beats to each page (default 20 s; tests use less). */
  readonly beatMs?: number;
  readonly streamClock?: StreamClock;
  /** Rooms of other adapters an operator may post into over MCP (the terminal room of the same process). */
  readonly postable?: readonly PostableRoom[];
}

export class WebAdapter implements ChatAdapter {
  readonly platform = WEB_PLATFORM;
  private readonly rooms: readonly string[];
  private readonly feeds = new Map<string, RoomFeed>();
  private readonly connections: Connections;
  private readonly server: WebServer;
  private readonly poster: ReplyPoster;
  private readonly access: Access;
  private readonly clock: () => number;
  private sink: AdapterSink | undefined;
  private checker: NodeJS.Timeout | undefined;
  private beater: NodeJS.Timeout | undefined;
  private boundPort: number | undefined;

  constructor(private readonly options: WebAdapterOptions) {
    const { settings, agents } = options.config;
    if (settings.WEB_PORT === undefined)
      throw new ConfigError('environment', 'WEB_PORT', 'is not set: the web room is off');
    this.rooms = settings.WEB_ROOMS;
    this.clock = options.clock ?? Date.now;
    const epoch = randomUUID();
    for (const room of this.rooms) this.feeds.set(room, new RoomFeed(epoch));
    const publicUrl = settings.WEB_PUBLIC_URL;
    this.access = new Access({
      people: options.people,
      sessionDays: settings.WEB_SESSION_DAYS,
      idleHours: settings.WEB_SESSION_IDLE_HOURS,
      secure: publicUrl?.startsWith('https://') ?? false,
      clock: this.clock,
    });
    // Uploads waiting for their message, all together: five of the largest.
    const files = new HeldFiles(this.clock, HELD_FILES * settings.WEB_MAX_FILE_MB * 1024 * 1024);
    this.connections = new Connections({
      feed: (room) => this.feed(room),
      sink: () => this.sink,
      identity: (session) => this.access.identity(session),
      files,
      posting: new RateLimit(10, 1000),
      beatMs: options.beatMs ?? BEAT_MS,
      clock: this.clock,
      log: options.logger,
    });
    const publicOrigin = publicUrl ? new URL(publicUrl).origin : undefined;
    const publicHost = publicUrl ? hostName(new URL(publicUrl).host) : undefined;
    const mcp = new McpEndpoint({
      desk: webDesk(this.rooms, this.connections, () => this.sink, options.postable),
      people: options.people,
      access: this.access,
      publicHost,
      publicOrigin,
      maxBodyBytes: MAX_FRAME_BYTES,
      clock: this.clock,
      log: options.logger,
    });
    this.server = new WebServer({
      host: settings.WEB_HOST,
      port: settings.WEB_PORT,
      publicOrigin,
      publicHost,
      mcp,
      trustedProxies: new Set(settings.WEB_TRUST_PROXY.map(plainAddress)),
      rooms: this.rooms,
      agents: agents.map((a) => a.name),
      publicDir: packagePath('adapters', 'web', 'public'),
      maxUploadBytes: settings.WEB_MAX_FILE_MB * 1024 * 1024,
      access: this.access,
      connections: this.connections,
      ops: new OpsApi({ sink: () => this.sink, online: () => this.online() }),
      files,
      people: async () => (await options.people.list(this.clock())).map((p) => p.name),
      signingIn: new RateLimit(20, 3000),
      uploading: new RateLimit(10, 2000),
      sink: () => this.sink,
      clock: this.clock,
      log: options.logger,
    });
    this.poster = new ReplyPoster({ log: options.logger, maxPosts: settings.MAX_REPLY_POSTS });
  }

  /** The port the room listens on (once started). */
  get port(): number | undefined {
    return this.boundPort;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    const { settings } = this.options.config;
    try {
      this.boundPort = await this.server.listen();
    } catch (error) {
      throw new ConfigError(
        'environment',
        'WEB_PORT',
        `cannot listen on ${settings.WEB_HOST}:${settings.WEB_PORT} (${(error as NodeJS.ErrnoException).code ?? error})`,
      );
    }
    this.checker = setInterval(() => void this.checkSessions(), SESSION_CHECK_MS);
    this.checker.unref();
    this.beater = setInterval(() => this.connections.beat(), this.options.beatMs ?? BEAT_MS);
    this.beater.unref();
    this.options.logger.info(
      { host: settings.WEB_HOST, port: this.boundPort, rooms: this.rooms },
      'web room listening',
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.checker);
    clearInterval(this.beater);
    this.connections.closeAll();
    await this.server.close();
    this.sink = undefined;
  }

  connected(): boolean {
    return this.server.listening;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    const feed = this.feed(message.channel);
    const target = this.target(feed, message);
    const { ids, error } = await this.poster.reply(target, message.text, message.text, options);
    if (error !== undefined && ids.length === 0) {
      throw new AdapterError(WEB_PLATFORM, `could not show a message in ${message.channel}`, { cause: error });
    }
    return { messageIds: ids };
  }

  stream(channel: string, agent: string): StreamingPost | undefined {
    if (!this.rooms.includes(channel)) return undefined;
    const feed = this.feed(channel);
    const edits = new EditStream({
      preview: (text) => text,
      final: (text) => [text],
      notifies: () => false,
      intervalMs: this.options.streamIntervalMs ?? 50,
      clock: this.options.streamClock ?? systemClock,
      logger: this.options.logger,
      transport: {
        create: async (text) => {
          const id = `s.${randomUUID()}`;
          feed.publish({ kind: 'stream', id, agent, text, at: this.clock() });
          return id;
        },
        edit: async (id, text) => feed.publish({ kind: 'stream', id, agent, text, at: this.clock() }),
        remove: async (id) => feed.publish({ kind: 'unstream', id }),
        append: async (chunks) => chunks.map((text) => this.show(feed, { channel, agent, text }, undefined)),
        postWhole: (text) => this.post({ channel, agent, text }),
      },
    });
    return {
      update: (text) => edits.update(text),
      cancel: () => edits.cancel(),
      finish: async (text) => {
        const posted = await edits.finish(text);
        // The reply shown while written becomes the message, under the same id.
        const [id] = posted.messageIds;
        if (id?.startsWith('s.')) this.show(feed, { channel, agent, text }, id);
        return posted;
      },
    };
  }

  async typing(channel: string, agent: string): Promise<void> {
    this.feeds.get(channel)?.signal({ type: 'typing', agent });
  }

  toolRun(channel: string, agent: string, command: string, output: string, tool = 'bash'): void {
    const shown = output.length > TOOL_OUTPUT_SHOWN ? `${output.slice(0, TOOL_OUTPUT_SHOWN)}…` : output;
    this.feeds.get(channel)?.publish({
      kind: 'tool',
      id: `t.${randomUUID()}`,
      agent,
      at: this.clock(),
      tool,
      command,
      output: shown,
      status: toolStatus(tool, output),
    });
  }

  /** An answered approval card is shown again without its buttons, saying how it ended (pages replace it by id). */
  async closeCard(room: string, messageId: string, text: string): Promise<void> {
    const feed = this.feed(room);
    const card = feed.messages().find((m) => m.id === messageId);
    if (!card) return;
    const { buttons: _gone, ...rest } = card;
    feed.publish({ kind: 'message', message: { ...rest, text } });
  }

  /** `#general`, `general`: a web room by name. */
  async resolveChannel(reference: string): Promise<string | undefined> {
    const name = reference.trim().replace(/^#/, '').toLowerCase();
    return this.rooms.includes(name) ? name : undefined;
  }

  private feed(room: string): RoomFeed {
    const feed = this.feeds.get(room);
    if (!feed) throw new AdapterError(WEB_PLATFORM, `there is no web room "${room}" (WEB_ROOMS)`);
    return feed;
  }

  /** Posting into a room's feed, as the shared reply procedure asks. */
  private target(feed: RoomFeed, message: Outbound): ReplyTarget {
    return {
      room: message.channel,
      limit: MESSAGE_LIMIT,
      // No attachments: a reply past the cap says how much was cut.
      fileLimitBytes: 0,
      send: async (text, key, _signal, last) =>
        this.show(feed, { ...message, text, buttons: last ? message.buttons : undefined }, key && `p.${key}`),
      attach: async () => undefined,
      recent: async (since) =>
        feed
          .messages()
          .filter((m) => m.at >= since && m.author === (message.agent ?? SYSTEM_AUTHOR))
          .map((m) => ({ id: m.id, text: m.text })),
    };
  }

  /** Shows one message on the room's pages; returns its id. */
  private show(feed: RoomFeed, message: Outbound, id: string | undefined): string {
    const shown: WireMessage = {
      id: id ?? `p.${randomUUID()}`,
      author: message.agent ?? SYSTEM_AUTHOR,
      role: message.agent ? 'agent' : 'system',
      text: message.text,
      at: this.clock(),
      tools: [],
      ...(message.buttons?.length ? { buttons: message.buttons } : {}),
    };
    feed.publish({ kind: 'message', message: shown });
    return shown.id;
  }

  private online(): Record<string, string[]> {
    return Object.fromEntries(this.rooms.map((room) => [room, this.connections.online(room)]));
  }

  /** Closes the pages of sessions that ended elsewhere (`web:invite --revoke`, expiry). */
  private async checkSessions(): Promise<void> {
    for (const session of this.connections.sessions()) {
      try {
        if (!(await this.access.stillOpen(session))) {
          this.connections.closeSession(session, 'Your session ended: ask an operator for a new sign-in link.');
        }
      } catch (error) {
        this.options.logger.warn({ err: error }, 'a web session could not be checked');
      }
    }
  }
}

/** How the bridge's own lines are signed on the page. */
const SYSTEM_AUTHOR = 'system';

export function createWebAdapter(options: WebAdapterOptions): WebAdapter {
  return new WebAdapter(options);
}
