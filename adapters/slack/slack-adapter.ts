import type { SlashCommand } from '@slack/bolt';
import type { Config } from '../../src/config/index.js';
import { AdapterError, ConfigError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type {
  AdapterSink,
  ChatAdapter,
  CommandName,
  InboundFile,
  Outbound,
  Posted,
  PostOptions,
  StreamingPost,
} from '../../src/ports.js';
import { REPLY_FILE_NAME } from '../shared/post-cap.js';
import { RoomMarks } from '../shared/room-marks.js';
import { SeenIds } from '../shared/seen-ids.js';
import { splitMessage } from '../shared/split.js';
import { EditStream, systemClock } from '../shared/streaming-post.js';
import { compareTs, SlackCatchUp } from './catch-up.js';
import { Directory } from './directory.js';
import { SlackHttpServer } from './http-server.js';
import { type SlackIdentity as Identity, SlackIdentity } from './identity.js';
import { ourApp, SLACK, type SlackFile, type SlackMessageEvent, toInbound, userIdsToLearn } from './inbound.js';
import { type MentionResolver, markdownToMrkdwn } from './mrkdwn.js';
import { SlackPosting } from './posting.js';
import { parseRoom } from './rooms.js';
import { StreamEchoes } from './stream-echoes.js';
import { isRateLimited, withRateLimitRetry } from './web-call.js';

export { SLACK } from './inbound.js';

/** Slack truncates the display of longer texts; its guidance is to keep a message under 4000 characters. */
export const SLACK_MESSAGE_LIMIT = 4000;

/** Slack's guidance for chat.update: about one edit per second per message. */
const STREAM_INTERVAL_MS = 1000;

/** How long one catch-up may wait out Slack's rate limits on reading history. */
const CATCH_UP_BUDGET_MS = 3 * 60_000;

/** Slack notifies people of a mention when a message is posted, never when it is edited. */
const LIVE_MENTION = /<@[UW][A-Z0-9]+(?:\|[^>]*)?>/;

interface Sender {
  readonly identity: SlackIdentity;
  /** `*name:* ` for an agent speaking through another app's identity. */
  readonly label: string;
  /** The agent's Markdown as Slack mrkdwn; `liveMentions` false leaves `@name` as plain text. */
  render(text: string, liveMentions?: boolean): string;
}

interface RoomRef {
  readonly room: string;
  readonly direct: string | undefined;
}

/**
 * Slack: one Bolt app per agent (its own bot user), all feeding one sink. Each
 * Slack message is forwarded once (by team, channel, ts) in arrival order per
 * conversation; replies are posted through the replying agent's own app.
 */
export class SlackAdapter implements ChatAdapter {
  readonly platform = SLACK;
  readonly identities: readonly SlackIdentity[];
  private readonly config: Config;
  private readonly log: Logger;
  private readonly directory = new Directory();
  private readonly seen = new SeenIds();
  private readonly echoes = new StreamEchoes();
  private readonly operators: ReadonlySet<string>;
  private readonly allowedBots: ReadonlySet<string>;
  /** The DM conversation → the agent whose app it belongs to. */
  private readonly dmOwner = new Map<string, string>();
  /** The Slack conversation → its most recently active room (slash commands act on it). */
  private readonly lastRoom = new Map<string, RoomRef>();
  private readonly chains = new Map<string, Promise<void>>();
  private httpServer: SlackHttpServer | undefined;
  private sink: AdapterSink | undefined;
  private boundPort: number | undefined;
  /** Where each room's catch-up starts. */
  private readonly marks: RoomMarks;
  private readonly posting: SlackPosting;
  private readonly catchUp: SlackCatchUp;
  /** Live messages wait while the rooms catch up (the history stays in order). */
  private gate: Promise<void> = Promise.resolve();
  private catchingUp: Promise<void> | undefined;

  constructor(options: { config: Config; logger: Logger }) {
    this.config = options.config;
    this.log = options.logger.child({ adapter: SLACK });
    const settings = options.config.settings;
    this.operators = new Set(settings.OPERATORS);
    if (settings.SLACK_STREAM === 'update') this.stream = (room, agent) => this.openStream(room, agent);
    this.allowedBots = new Set(settings.SLACK_ALLOWED_BOTS.map((b) => b.toLowerCase()));
    const agents = options.config.agents.filter((a) => a.slack);
    const control = agents.find((a) => a.slack?.control) ?? agents[0];
    this.identities = agents.map((agent) => {
      const slack = agent.slack as NonNullable<typeof agent.slack>;
      return new SlackIdentity({
        agent: agent.name,
        botToken: slack.botToken,
        appToken: slack.appToken,
        signingSecret: slack.signingSecret,
        control: agent === control,
        apiUrl: settings.SLACK_API_URL,
        logger: this.log,
      });
    });
    this.marks = new RoomMarks({ platform: SLACK, compare: compareTs, sink: () => this.sink });
    this.posting = new SlackPosting({ log: this.log, maxPosts: settings.MAX_REPLY_POSTS });
    this.catchUp = new SlackCatchUp({
      platform: SLACK,
      sink: () => this.sink,
      identities: () => this.identities,
      ownerOf: (channel) => this.ownerOf(channel),
      marks: this.marks,
      max: settings.CATCHUP_MAX,
      budgetMs: CATCH_UP_BUDGET_MS,
      forward: (identity, event) => this.forwardMissed(identity, event),
      log: this.log,
    });
    const http = this.identities.filter((i) => i.mode === 'http');
    if (http.length > 0 && settings.SLACK_PORT === undefined) {
      throw new ConfigError(
        'environment',
        'SLACK_PORT',
        `must be set for Slack HTTP mode (${http.map((i) => i.agent).join(', ')} ha${http.length > 1 ? 've' : 's'} a signing secret and no app token)`,
      );
    }
  }

  /** The port the HTTP-mode server listens on (useful with SLACK_PORT=0). */
  get httpPort(): number | undefined {
    return this.boundPort;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    // DMs the store knows from before a restart: the bridge's own messages there go through their app.
    for (const room of sink.directRooms?.(SLACK) ?? []) {
      const channel = room.channel.split('/')[0] ?? room.channel;
      if (this.identities.some((i) => i.agent === room.agent)) this.dmOwner.set(channel, room.agent);
    }
    let connected = false;
    const caughtUp = this.catchUpAll(async () => {
      await this.connect();
      connected = true;
    });
    try {
      await caughtUp;
    } catch (error) {
      // Leave nothing half-open: the apps that did connect are closed again.
      await this.stop();
      throw error;
    }
    if (!connected) throw new AdapterError(SLACK, 'the Slack apps did not connect');
  }

  /**
   * Reads what the rooms missed (after `before`, the connection); live messages wait meanwhile. A failed
   * catch-up is logged: the rooms stay out of sync, and the next one starts from the same marks.
   */
  private catchUpAll(before: () => Promise<void> = async () => {}): Promise<void> {
    if (this.catchingUp) return this.catchingUp;
    let open: () => void = () => {};
    this.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.catchingUp = (async () => {
      try {
        await before();
        await this.catchUp.run().catch((error: unknown) => this.log.warn({ err: error }, 'slack catch-up failed'));
      } finally {
        open();
        this.catchingUp = undefined;
      }
    })();
    return this.catchingUp;
  }

  private async connect(): Promise<void> {
    await Promise.all(this.identities.map((identity) => identity.authenticate()));
    for (const identity of this.identities) {
      this.directory.addAgent(identity.botUserId, identity.agent);
      identity.build({
        message: (id, event, teamId) => this.onMessage(id, event, teamId),
        command: (id, command, respond) => this.onCommand(id, command, respond),
        // Until the next catch-up, the rooms may miss messages; after a reconnect, it runs.
        disconnected: () => this.marks.dropped(),
        reconnected: () => void this.catchUpAll(),
      });
    }
    const http = this.identities.filter((i) => i.mode === 'http');
    if (http.length > 0) {
      this.httpServer = new SlackHttpServer(http);
      this.boundPort = await this.httpServer.listen(this.config.settings.SLACK_PORT ?? 0);
      this.log.info({ port: this.boundPort }, 'slack HTTP events server listening');
    }
    await Promise.all(this.identities.map((identity) => identity.start()));
    this.log.info({ agents: this.identities.map((i) => `${i.agent}(${i.mode})`) }, 'slack apps connected');
  }

  /** Every app's Socket Mode connection is open, and the HTTP server listens when any app uses it. */
  connected(): boolean {
    const httpOk = !this.identities.some((i) => i.mode === 'http') || this.httpServer?.listening === true;
    return this.sink !== undefined && httpOk && this.identities.every((identity) => identity.connected);
  }

  async stop(): Promise<void> {
    this.marks.flush();
    await Promise.allSettled(this.identities.map((identity) => identity.stop()));
    await this.httpServer?.close();
    await Promise.allSettled([...this.chains.values()]);
    this.sink = undefined;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    const { channel, threadTs } = parseRoom(message.channel);
    const { identity, render, label } = this.senderOf(channel, message.agent);
    const chunks = splitMessage(render(message.text), SLACK_MESSAGE_LIMIT);
    let ids: string[];
    try {
      ids = await this.posting.reply(identity, { channel, threadTs }, chunks, label + message.text, options);
    } catch (error) {
      throw new AdapterError(SLACK, `@${identity.agent} could not post: ${describeError(error)}`, { cause: error });
    }
    this.lastRoom.set(channel, { room: message.channel, direct: this.dmOwner.get(channel) });
    return { messageIds: ids };
  }

  /**
   * With SLACK_STREAM=update: a reply shown while it is written, posted once and then edited
   * with chat.update (at most once a second) through the agent's own app. Absent otherwise, so the
   * bridge does not ask the model to stream for nothing (unless LLM_STREAM says so).
   */
  readonly stream?: (room: string, agent: string) => StreamingPost | undefined;

  private openStream(room: string, agent: string): StreamingPost | undefined {
    if (this.identities.length === 0) return undefined;
    const { channel, threadTs } = parseRoom(room);
    const { identity, render } = this.senderOf(channel, agent);
    const client = identity.client;
    const where = { channel, ...(threadTs ? { thread_ts: threadTs } : {}) };
    const failed = (what: string, error: unknown) =>
      new AdapterError(SLACK, `@${identity.agent} could not ${what}: ${describeError(error)}`, { cause: error });
    this.lastRoom.set(channel, { room, direct: this.dmOwner.get(channel) });
    return new EditStream({
      intervalMs: STREAM_INTERVAL_MS,
      clock: systemClock,
      logger: this.log.child({ agent, room }),
      // Mentions in a preview stay plain text: a posted preview would notify, and the final reply may too.
      preview: (text) => splitMessage(render(text, false), SLACK_MESSAGE_LIMIT)[0] ?? '',
      final: (text) => splitMessage(render(text), SLACK_MESSAGE_LIMIT),
      notifies: (message) => LIVE_MENTION.test(message),
      transport: {
        create: (text) =>
          this.echoes.track(
            channel,
            client.chat.postMessage({ ...where, text, unfurl_links: false }).then(
              (result) => result.ts,
              (error: unknown) => {
                if (isRateLimited(error)) return undefined; // nothing posted; a later preview tries again
                throw failed('post', error);
              },
            ),
          ),
        edit: async (ts, text, final) => {
          const call = () => client.chat.update({ channel, ts, text });
          try {
            // chat.update is safe to repeat; only the final edit is worth waiting out a 429 for.
            await (final ? withRateLimitRetry(call) : call());
          } catch (error) {
            throw failed('edit its reply', error);
          }
        },
        remove: async (ts) => {
          try {
            await withRateLimitRetry(() => client.chat.delete({ channel, ts }));
          } catch (error) {
            throw failed('delete its unfinished reply', error);
          }
        },
        append: (chunks) => this.postChunks(identity, channel, threadTs, chunks),
        postWhole: (text) => this.post({ channel: room, agent, text }),
      },
    });
  }

  /** Which app posts for `agent` (null: the bridge) in a conversation, and how its text reads in Slack. */
  private senderOf(channel: string, agent: string | null): Sender {
    const named = agent ? this.identities.find((i) => i.agent === agent) : undefined;
    const identity = named ?? this.ownerOf(channel) ?? this.control();
    if (!identity) throw new AdapterError(SLACK, 'no Slack app is configured');
    // An agent without a Slack app of its own speaks through the control app, under its name.
    const label = agent && !named ? `*${agent}:* ` : '';
    const mention: MentionResolver = (name) => this.directory.idFor(name);
    return {
      identity,
      label,
      render: (text, liveMentions = true) => label + markdownToMrkdwn(text, liveMentions ? mention : () => undefined),
    };
  }

  /** Posts chunks one by one (in the thread, if any); retries a chunk only on 429. */
  private async postChunks(
    identity: SlackIdentity,
    channel: string,
    threadTs: string | undefined,
    chunks: readonly string[],
    signal?: AbortSignal,
  ): Promise<string[]> {
    try {
      return await this.posting.send(identity, { channel, threadTs }, chunks, signal);
    } catch (error) {
      throw new AdapterError(SLACK, `@${identity.agent} could not post: ${describeError(error)}`, { cause: error });
    }
  }

  // ---- inbound ----

  private onMessage(identity: Identity, event: SlackMessageEvent, teamId: string | undefined): void {
    if (!this.sink || !event.channel || !event.ts) return;
    const key = `${teamId ?? identity.teamId}:${event.channel}:${event.ts}`;
    const duringCatchUp = this.catchingUp !== undefined;
    this.inOrder(event.channel, async () => {
      await this.gate;
      // Decided after the catch-up: it may have forwarded this message already, or left it out (CATCHUP_MAX).
      if (duringCatchUp && this.caughtUpPast(event)) return;
      if (!this.seen.add(key)) return;
      await this.forward(identity, event);
    });
  }

  /** Whether the catch-up covered the conversation (or thread) up to this message's time. */
  private caughtUpPast(event: SlackMessageEvent): boolean {
    const thread = event.thread_ts && event.thread_ts !== event.ts ? event.thread_ts : undefined;
    const mark = this.marks.start(thread ? `${event.channel}/${thread}` : event.channel);
    return mark !== undefined && compareTs(event.ts, mark) <= 0;
  }

  /** A message a catch-up fetched: forwarded once (a live copy of it is then a duplicate), as missed. */
  private async forwardMissed(identity: Identity, event: SlackMessageEvent): Promise<void> {
    if (!this.seen.add(`${identity.teamId}:${event.channel}:${event.ts}`)) return;
    await this.forward(identity, event, true);
  }

  /** Runs tasks of one Slack conversation one after another, so name lookups cannot reorder messages. */
  private inOrder(channel: string, task: () => Promise<void>): void {
    const previous = this.chains.get(channel) ?? Promise.resolve();
    const next = previous.then(task).catch((error: unknown) => {
      this.log.error({ err: error, channel }, 'forwarding a slack message failed');
    });
    this.chains.set(channel, next);
    void next.then(() => {
      if (this.chains.get(channel) === next) this.chains.delete(channel);
    });
  }

  private async forward(identity: Identity, event: SlackMessageEvent, missed = false): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    const ours = ourApp(event, this.identities);
    // A streamed preview is the bridge's to record (or it was deleted): never a new message.
    if (ours && (await this.echoes.isPreview(event.channel, event.ts))) return;
    // The file a long reply ends with belongs to that reply, already recorded: never a new message.
    if (ours && event.files?.some((file) => file.name === REPLY_FILE_NAME)) return;
    await this.directory.learn(identity.client, userIdsToLearn(event, this.identities));
    const inbound = toInbound(event, {
      apps: this.identities,
      receiver: identity.agent,
      nameOf: (id) => this.directory.nameOf(id),
      allowedBots: this.allowedBots,
      replyInThread: this.config.settings.SLACK_REPLY_IN_THREAD,
      fileOf: (file) => this.fileOf(identity, file),
    });
    if (!inbound) return;
    if (inbound.direct) this.dmOwner.set(event.channel, identity.agent);
    this.lastRoom.set(event.channel, { room: inbound.channel, direct: inbound.direct?.agent });
    if (!missed) this.marks.forwarded(inbound.channel, event.ts);
    await sink.receive(missed ? { ...inbound, missed } : inbound);
  }

  /** A shared file, downloadable through the app that received it (its token, Slack's file host only). */
  private fileOf(identity: Identity, file: SlackFile): InboundFile {
    const url = file.url_private_download ?? file.url_private;
    const maxBytes = this.config.settings.SLACK_MAX_FILE_MB * 1024 * 1024;
    return {
      name: file.name ?? file.title ?? file.id,
      mimeType: file.mimetype,
      size: file.size ?? 0,
      download: (signal) =>
        url
          ? identity.downloadFile(url, { maxBytes, mimeType: file.mimetype, signal })
          : Promise.reject(new Error('Slack did not share the file itself with the app')),
    };
  }

  // ---- operator commands ----

  private async onCommand(
    _identity: Identity,
    command: SlashCommand,
    respond: (text: string) => Promise<void>,
  ): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    const name = command.command.replace(/^\//, '') as CommandName;
    const known = this.lastRoom.get(command.channel_id);
    const owner = this.dmOwner.get(command.channel_id);
    if (!known && command.channel_id.startsWith('D') && !owner) {
      await respond('Nothing to act on here yet: write to the agent in this conversation first.');
      return;
    }
    const target: RoomRef = known ?? { room: command.channel_id, direct: owner };
    let answer: string;
    try {
      answer = await sink.command({
        platform: SLACK,
        channel: target.room,
        name,
        args: (command.text ?? '').trim(),
        user: { id: command.user_id, name: command.user_name },
        isOperator: this.operators.has(command.user_id),
        ...(target.direct ? { direct: { agent: target.direct } } : {}),
      });
    } catch (error) {
      answer = `/${name} failed: ${describeError(error)}`;
    }
    const where = target.room !== command.channel_id ? 'In the latest thread here: ' : '';
    // A long answer (a /status with many agents) is split, never cut.
    for (const part of splitMessage(where + answer, SLACK_MESSAGE_LIMIT)) await respond(part);
  }

  // ---- identities ----

  private control(): SlackIdentity | undefined {
    return this.identities.find((i) => i.control);
  }

  /** The DM between an agent's app and a human it has seen (by their `@name`), for send_dm. */
  async openDirect(agent: string, user: string): Promise<string | undefined> {
    const identity = this.identities.find((i) => i.agent.toLowerCase() === agent.toLowerCase());
    const userId = this.directory.idFor(user.replace(/^@/, ''));
    if (!identity || !userId) return undefined;
    const opened = await identity.client.conversations.open({ users: userId });
    const channel = opened.channel?.id;
    if (channel) this.dmOwner.set(channel, identity.agent);
    return channel;
  }

  /** `#name`, `<#C123|name>` or an id of a channel one of the apps is in, for send_channel_message. */
  async resolveChannel(reference: string): Promise<string | undefined> {
    const ref = reference.trim();
    const linked = /^<#([A-Z0-9]+)(?:\|[^>]*)?>$/.exec(ref);
    if (linked) return linked[1];
    if (/^[CG][A-Z0-9]{6,}$/.test(ref)) return ref;
    const name = ref.replace(/^#/, '').toLowerCase();
    for (const identity of this.identities) {
      const list = await identity.client.conversations.list({ types: 'public_channel,private_channel', limit: 1000 });
      const found = list.channels?.find((c) => c.name?.toLowerCase() === name);
      if (found?.id) return found.id;
    }
    return undefined;
  }

  /** A DM belongs to one app; only that app can post there. */
  private ownerOf(channel: string): SlackIdentity | undefined {
    const owner = this.dmOwner.get(channel);
    return owner ? this.identities.find((i) => i.agent === owner) : undefined;
  }
}
