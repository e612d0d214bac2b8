/**
 * The open pages of the web rooms, one WebSocket each. A page that connects gets the room's newest messages (from
 * the store, with what is not stored yet) or — back after a short drop — exactly the events it missed. What a person
 * sends is a message (with files uploaded before) or, starting with a command name, an operator command answered to
 * them alone. A post carries the page's own id: sent again after a reconnect, it is taken once.
 */
import { createHash, randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { z } from 'zod';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { TranscriptEntry } from '../../src/overview.js';
import { type AdapterSink, type CommandName, ROOM_COMMANDS } from '../../src/ports.js';
import type { WebIdentity } from '../../src/store/port.js';
import { SeenIds } from '../shared/seen-ids.js';
import type { Viewer } from './access.js';
import type { RoomFeed } from './feed.js';
import type { HeldFiles } from './held-files.js';
import { CLOSE_SIGNED_OUT, type ServerFrame, type WireMessage } from './protocol.js';
import type { RateLimit } from './rate-limit.js';
import { toolStatus } from './tool-status.js';

export const WEB_PLATFORM = 'web';
/** Messages a page gets when it connects, and per page of history. */
export const PAGE_SIZE = 50;
/** The longest message a person may send. */
export const MAX_TEXT = 16_000;
/** The most files one message may carry. */
export const MAX_FILES = 10;

const HELP = [
  'Commands (operators): /status, /pass [agent], /reset [agent|workspace], /privacy [mentions|off], /budget [limit],',
  '/access, /pair [code]. Anyone: /approve <id>, /deny <id> (their own cards).',
  'Enter sends, Shift+Enter starts a new line, @ completes a name.',
].join(' ');

const postFrame = z.object({
  type: z.literal('post'),
  id: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
  text: z.string().max(MAX_TEXT),
  files: z.array(z.string().max(64)).max(MAX_FILES).optional(),
});

interface Connection {
  readonly ws: WebSocket;
  readonly viewer: Viewer;
  readonly room: string;
  /** No pong since the last ping. */
  silent: boolean;
}

export interface ConnectionsDeps {
  readonly feed: (room: string) => RoomFeed;
  readonly sink: () => AdapterSink | undefined;
  /** Who a session is now, from the store (undefined once it ended): rights are read at every command. */
  readonly identity: (session: string) => Promise<WebIdentity | undefined>;
  readonly files: HeldFiles;
  /** Posts per person. */
  readonly posting: RateLimit;
  /** Milliseconds between beats (told to each page). */
  readonly beatMs: number;
  readonly clock: () => number;
  readonly log: Logger;
}

/** Where a page picks up after a drop: the epoch and the last event number it saw. */
export interface ResumePoint {
  readonly epoch: string;
  readonly after: number;
}

export class Connections {
  private readonly open = new Set<Connection>();
  private readonly seen = new SeenIds();
  /** Posts being stored, by message id: a copy sent again waits for the first. */
  private readonly storing = new Map<string, Promise<void>>();

  constructor(private readonly deps: ConnectionsDeps) {}

  /** A page connected to a room (its session checked): bring it up to date, then keep it so. */
  async accept(ws: WebSocket, viewer: Viewer, room: string, resume: ResumePoint | undefined): Promise<void> {
    const connection: Connection = { ws, viewer, room, silent: false };
    ws.on('pong', () => {
      connection.silent = false;
    });
    const feed = this.deps.feed(room);
    let waiting: ServerFrame[] | undefined = [];
    const unlisten = feed.listen((frame) => (waiting ? waiting.push(frame) : send(ws, frame)));
    this.open.add(connection);
    ws.on('close', () => {
      unlisten();
      this.open.delete(connection);
    });
    ws.on('message', (data, binary) => {
      if (binary) return;
      void this.onFrame(connection, String(data)).catch((error: unknown) => {
        this.deps.log.warn({ err: error, room }, 'a web room frame could not be handled');
      });
    });
    if (resume && feed.canResume(resume.epoch, resume.after)) {
      send(ws, { type: 'resume', epoch: feed.epoch, n: feed.n, beat: this.deps.beatMs });
      for (const frame of feed.since(resume.after)) send(ws, frame);
    } else {
      const n = feed.n;
      const live = feed.messages();
      const streams = feed.streams();
      const stored = (await this.deps.sink()?.transcript?.(roomKey(room), { limit: PAGE_SIZE })) ?? [];
      const messages = merge(stored.map(wireMessage), live);
      send(ws, {
        type: 'welcome',
        epoch: feed.epoch,
        n,
        room,
        me: { name: viewer.name, operator: viewer.operator },
        messages,
        streams,
        older: stored.length >= PAGE_SIZE ? (stored[0]?.cursor ?? null) : null,
        beat: this.deps.beatMs,
      });
    }
    const queued = waiting;
    waiting = undefined;
    for (const frame of queued) send(ws, frame);
  }

  /** Ends the pages of a session (signed out, revoked): told why, then closed for good. */
  closeSession(session: string, reason: string): void {
    for (const connection of this.open) {
      if (connection.viewer.session !== session) continue;
      send(connection.ws, { type: 'bye', reason });
      connection.ws.close(CLOSE_SIGNED_OUT, 'signed out');
    }
  }

  /** The sessions of the open pages. */
  sessions(): Set<string> {
    return new Set([...this.open].map((connection) => connection.viewer.session));
  }

  /** Who has the room open now. */
  online(room: string): string[] {
    const names = [...this.open].filter((c) => c.room === room).map((c) => c.viewer.name);
    return [...new Set(names)].sort();
  }

  /**
   * Keeps connections honest: every page gets a beat (so it notices a connection that died without a word), and a
   * connection that did not answer the last ping is ended.
   */
  beat(): void {
    for (const connection of this.open) {
      if (connection.silent) {
        connection.ws.terminate();
        continue;
      }
      connection.silent = true;
      connection.ws.ping();
      send(connection.ws, { type: 'beat' });
    }
  }

  closeAll(): void {
    for (const connection of this.open) connection.ws.close(1001, 'the bridge is stopping');
    this.open.clear();
  }

  private async onFrame(connection: Connection, data: string): Promise<void> {
    const { ws, viewer, room } = connection;
    let parsed: z.infer<typeof postFrame>;
    try {
      parsed = postFrame.parse(JSON.parse(data));
    } catch {
      send(ws, { type: 'notice', text: 'That could not be read (a message is at most 16,000 characters).' });
      return;
    }
    const text = parsed.text.trim();
    const command = /^\/(\w+)(?:\s+([\s\S]*))?$/.exec(text);
    const messageId = `h.${personKey(viewer.name)}.${parsed.id}`;
    // Commands count as posts; a post sent again is not counted twice.
    if (!this.seen.has(messageId) && !this.deps.posting.take(viewer.name.toLowerCase(), this.deps.clock())) {
      send(ws, {
        type: 'refused',
        id: parsed.id,
        reason: 'You are sending messages too fast; wait a few seconds and send it again.',
      });
      return;
    }
    // Sent again after a reconnect: taken once (a command too: it is not carried out twice).
    if (!this.seen.add(messageId)) {
      await this.storing.get(messageId);
      send(ws, { type: 'ack', id: parsed.id });
      return;
    }
    if (command) {
      send(ws, { type: 'notice', text: await this.command(viewer, room, command[1] ?? '', command[2] ?? '') });
      send(ws, { type: 'ack', id: parsed.id });
      return;
    }
    const files = parsed.files ?? [];
    if (!text && files.length === 0) {
      send(ws, { type: 'ack', id: parsed.id });
      return;
    }
    // A refused post is not taken: the page keeps its text, and sending it again is a new post.
    const refused = (reason: string) => send(ws, { type: 'refused', id: parsed.id, reason });
    const claimed = this.deps.files.claim(files, viewer.name, room);
    if (!claimed) {
      refused('An attached file is no longer held (files wait 15 minutes for their message); attach it again.');
      return;
    }
    const storing = this.post(viewer, room, messageId, text, claimed);
    this.storing.set(messageId, storing);
    try {
      await storing;
      this.deps.files.release(files);
      send(ws, { type: 'ack', id: parsed.id });
    } catch (error) {
      this.deps.log.error({ err: error, room }, 'a web room message could not be taken');
      send(ws, { type: 'refused', id: parsed.id, reason: `It could not be taken: ${describeError(error)}` });
    } finally {
      this.storing.delete(messageId);
    }
  }

  /**
   * A message from a person who has no page open (an operator's MCP client): the same path as a page's post, under
   * the same rate limit. Resolves with the message's id once the bridge took it.
   */
  async postFrom(person: WebIdentity, room: string, text: string): Promise<string> {
    if (!this.deps.posting.take(person.name.toLowerCase(), this.deps.clock())) {
      throw new Error('too many messages: wait a few seconds and post again');
    }
    const id = `h.${personKey(person.name)}.${randomUUID()}`;
    await this.post({ name: person.name }, room, id, text.trim(), []);
    return id;
  }

  /** Shows the message to the room at once, then hands it to the bridge (files first saved into the workspace). */
  private async post(
    viewer: Pick<Viewer, 'name'>,
    room: string,
    id: string,
    text: string,
    files: NonNullable<Parameters<AdapterSink['receive']>[0]['files']>,
  ): Promise<void> {
    const at = this.deps.clock();
    this.deps.feed(room).publish({
      kind: 'message',
      message: {
        id,
        author: viewer.name,
        role: 'human',
        text,
        at,
        tools: [],
        ...(files.length > 0 ? { files: files.map((f) => f.name) } : {}),
      },
    });
    await this.deps.sink()?.receive({
      platform: WEB_PLATFORM,
      channel: room,
      messageId: id,
      author: { id: `web:${viewer.name.toLowerCase()}`, name: viewer.name, kind: 'human' },
      text,
      at,
      ...(files.length > 0 ? { files } : {}),
    });
  }

  /** An operator command typed in the box; its answer is this person's alone. */
  private async command(viewer: Viewer, room: string, word: string, args: string): Promise<string> {
    const name = word.toLowerCase();
    if (name === 'help') return HELP;
    if (!(ROOM_COMMANDS as readonly string[]).includes(name)) {
      return `Unknown command /${word}. Commands: /help, /status, /pass, /reset, /privacy, /budget.`;
    }
    const sink = this.deps.sink();
    if (!sink) return 'The bridge is not running.';
    // Not the rights the page opened with: an operator demoted since is one no longer.
    const now = await this.deps.identity(viewer.session);
    if (!now) return 'Your session ended: ask an operator for a new sign-in link.';
    // Without a platform id a command is always answered here (no other bridge receives it).
    const answer = await sink.command({
      platform: WEB_PLATFORM,
      channel: room,
      name: name as CommandName,
      args: args.trim(),
      user: { id: `web:${viewer.name.toLowerCase()}`, name: viewer.name },
      isOperator: now.operator,
    });
    return answer ?? '';
  }
}

export function roomKey(room: string): string {
  return `${WEB_PLATFORM}:${room}`;
}

/** A stored message as the page shows it. */
export function wireMessage(entry: TranscriptEntry): WireMessage {
  return {
    id: entry.id,
    author: entry.author,
    role: entry.kind,
    text: entry.text,
    at: entry.at,
    tools: entry.toolRuns.map((run) => ({
      tool: run.tool,
      command: run.input,
      output: run.output,
      status: toolStatus(run.tool, run.output),
    })),
    cursor: entry.cursor,
  };
}

/**
 * The stored page, then the live messages not stored yet (a room stores in order: they are the newest); a stored
 * card still in the live feed is shown as it is there: with its buttons while it waits, closed once answered.
 */
function merge(stored: WireMessage[], live: WireMessage[]): WireMessage[] {
  const ids = new Set(stored.map((m) => m.id));
  const cards = new Map(live.flatMap((m) => (m.role === 'system' ? [[m.id, m] as const] : [])));
  const oldest = stored[0]?.at ?? Number.NEGATIVE_INFINITY;
  const kept = stored.map((m) => {
    const card = cards.get(m.id);
    return card ? { ...m, text: card.text, ...(card.buttons ? { buttons: card.buttons } : {}) } : m;
  });
  return [...kept, ...live.filter((m) => !ids.has(m.id) && m.at >= oldest)];
}

/** A short, stable key of a person, in their messages' ids (ids of two people never meet). */
function personKey(name: string): string {
  return createHash('sha256').update(name.toLowerCase()).digest('base64url').slice(0, 10);
}

function send(ws: WebSocket, frame: ServerFrame): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
}
