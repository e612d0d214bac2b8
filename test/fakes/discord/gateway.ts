/**
 * The fake gateway: Discord's WebSocket protocol (HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeats, RESUME
 * with replay of missed events, INVALID_SESSION) for every bot identity. Frames are plain JSON (no zlib).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { guildJson, userJson } from './payloads.js';
import type { FakeBot, World } from './world.js';

const Op = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 };

interface Session {
  readonly id: string;
  readonly bot: FakeBot;
  seq: number;
  /** Every dispatch of this session, so a RESUME can replay what the client missed. */
  readonly sent: { s: number; frame: string }[];
  socket: WebSocket | null;
  resumable: boolean;
  ended: boolean;
}

export class FakeGateway {
  private readonly server = new WebSocketServer({ noServer: true });
  private readonly sessions: Session[] = [];
  /** Resolvers waiting for a bot to (re)connect. */
  private readonly waiters: { botId: string; resolve: () => void }[] = [];
  /** Every IDENTIFY and RESUME received, for tests. */
  readonly log: { op: 'identify' | 'resume'; botId: string | undefined }[] = [];

  constructor(
    private readonly world: World,
    private readonly url: () => string,
    /** Told whenever a session connects or disconnects (tests wait on it). */
    private readonly notify: () => void = () => {},
  ) {
    this.server.on('connection', (socket) => this.onConnection(socket));
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.server.handleUpgrade(request, socket, head, (ws) => this.server.emit('connection', ws, request));
  }

  /** Sends an event to every live session of the bots chosen (all bots when `botIds` is undefined). */
  dispatch(event: string, data: unknown, botIds?: readonly string[]): void {
    for (const session of this.sessions) {
      if (session.ended) continue;
      if (botIds && !botIds.includes(session.bot.id)) continue;
      this.send(session, event, data);
    }
  }

  /** Whether the bot has a connected, identified session. */
  isConnected(botId: string): boolean {
    return this.sessions.some((session) => !session.ended && session.bot.id === botId && session.socket !== null);
  }

  /** Resolves once the bot has a connected session (after READY or RESUMED). */
  connected(botId: string): Promise<void> {
    if (this.isConnected(botId)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ botId, resolve }));
  }

  /**
   * Closes the bot's connections with 4000 (unknown error), a code after which clients resume.
   * With `resumable: false` the resume is refused (INVALID_SESSION), so the client identifies afresh and
   * every event sent meanwhile is lost to it — only the channel history has them.
   */
  drop(botId: string, options: { resumable: boolean }): void {
    for (const session of this.sessions) {
      if (session.ended || session.bot.id !== botId || !session.socket) continue;
      session.resumable = options.resumable;
      session.socket.close(4000, 'dropped by the fake');
      session.socket = null;
    }
  }

  close(): void {
    for (const client of this.server.clients) client.terminate();
    this.server.close();
  }

  private send(session: Session, event: string, data: unknown): void {
    session.seq += 1;
    const frame = JSON.stringify({ op: Op.Dispatch, t: event, s: session.seq, d: data });
    session.sent.push({ s: session.seq, frame });
    if (session.sent.length > 1000) session.sent.shift();
    session.socket?.send(frame);
  }

  private onConnection(socket: WebSocket): void {
    let session: Session | undefined;
    socket.send(JSON.stringify({ op: Op.Hello, d: { heartbeat_interval: 41_250 } }));
    socket.on('message', (raw) => {
      let payload: { op: number; d: unknown };
      try {
        payload = JSON.parse(String(raw));
      } catch {
        socket.close(4002, 'decode error');
        return;
      }
      if (payload.op === Op.Heartbeat) socket.send(JSON.stringify({ op: Op.HeartbeatAck }));
      else if (payload.op === Op.Identify) session = this.identify(socket, payload.d as { token?: string });
      else if (payload.op === Op.Resume) session = this.resume(socket, payload.d as ResumeData);
    });
    socket.on('close', (code) => {
      if (!session || session.socket !== socket) return;
      session.socket = null;
      // A client closing normally ends its session, as on Discord; other codes leave it resumable.
      if (code === 1000 || code === 1001) session.ended = true;
      this.notify();
    });
  }

  private identify(socket: WebSocket, data: { token?: string }): Session | undefined {
    const bot = this.world.botByToken(data.token);
    this.log.push({ op: 'identify', botId: bot?.id });
    if (!bot) {
      socket.close(4004, 'Authentication failed');
      return undefined;
    }
    const session: Session = {
      id: randomUUID().replaceAll('-', ''),
      bot,
      seq: 0,
      sent: [],
      socket,
      resumable: true,
      ended: false,
    };
    this.sessions.push(session);
    this.send(session, 'READY', {
      v: 10,
      user: { ...userJson(bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: [{ id: this.world.guildId, unavailable: true }],
      session_id: session.id,
      resume_gateway_url: this.url(),
      shard: [0, 1],
      application: { id: bot.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      user_settings: {},
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
    });
    // discord.js waits for one GUILD_CREATE per guild listed in READY (15 s otherwise).
    this.send(session, 'GUILD_CREATE', guildJson(this.world, bot));
    this.wake(bot.id);
    return session;
  }

  private resume(socket: WebSocket, data: ResumeData): Session | undefined {
    const bot = this.world.botByToken(data.token);
    this.log.push({ op: 'resume', botId: bot?.id });
    const session = this.sessions.find((candidate) => candidate.id === data.session_id && candidate.bot === bot);
    if (!session || session.ended || !session.resumable) {
      if (session) session.ended = true;
      socket.send(JSON.stringify({ op: Op.InvalidSession, d: false }));
      return undefined;
    }
    session.socket = socket;
    for (const item of session.sent) if (item.s > data.seq) socket.send(item.frame);
    this.send(session, 'RESUMED', null);
    this.wake(session.bot.id);
    return session;
  }

  private wake(botId: string): void {
    this.notify();
    for (let index = this.waiters.length - 1; index >= 0; index -= 1) {
      const waiter = this.waiters[index];
      if (waiter?.botId === botId) {
        this.waiters.splice(index, 1);
        waiter.resolve();
      }
    }
  }
}

interface ResumeData {
  token?: string;
  session_id?: string;
  seq: number;
}
