import type { Config } from '../../src/config/index.js';
import { AdapterError, ConfigError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type {
  AdapterSink,
  ChatAdapter,
  InboundFile,
  Outbound,
  Posted,
  PostOptions,
  Receipt,
  StreamingPost,
} from '../../src/ports.js';
import { REPLY_FILE_NAME } from '../shared/post-cap.js';
import { ReplyPoster } from '../shared/reply-posting.js';
import { RoomMarks } from '../shared/room-marks.js';
import { SeenIds } from '../shared/seen-ids.js';
import { AccessFacts } from './access-facts.js';
import { compareTs, SlackCatchUp } from './catch-up.js';
import { answerByResponseUrl, SlackCommands } from './commands.js';
import { Directory } from './directory.js';
import { postEphemeral } from './ephemeral.js';
import { SlackHttpServer } from './http-server.js';
import { type SlackIdentity as Identity, SlackIdentity } from './identity.js';
import { ourApp, SLACK, type SlackFile, type SlackMessageEvent, toInbound, userIdsToLearn } from './inbound.js';
import { type MentionResolver, markdownToMrkdwn } from './mrkdwn.js';
import { closeCardMessage, type Sender, slackTarget } from './posting.js';
import { Reconnects } from './reconnects.js';
import { findChannel, isMember, parseRoom, shareChannel } from './rooms.js';
import { StreamEchoes } from './stream-echoes.js';
import { startSlackStream } from './streaming.js';
import { ThreadParents } from './thread-parents.js';
import { postFailed } from './web-call.js';

export { SLACK } from './inbound.js';
export { SLACK_MESSAGE_LIMIT } from './posting.js';

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
  private readonly allowedBots: ReadonlySet<string>;
  /** The DM conversation → the agent whose app it belongs to. */
  private readonly dmOwner = new Map<string, string>();
  private readonly commands: SlackCommands;
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Live messages being handed to the bridge, by key: a redelivery (or another app's copy) waits for the same. */
  private readonly pending = new Map<string, Promise<Receipt>>();
  private httpServer: SlackHttpServer | undefined;
  private sink: AdapterSink | undefined;
  private boundPort: number | undefined;
  /** Where each room's catch-up starts. */
  private readonly marks: RoomMarks;
  private readonly poster: ReplyPoster;
  /** Reads what the rooms missed, in the background: live messages never wait for it. */
  private readonly catchUp: SlackCatchUp;
  private readonly reconnects: Reconnects;
  /** The parent of a thread that is a room apart from it, for the agents to read with the thread. */
  private readonly parents: ThreadParents;
  private readonly facts: AccessFacts;

  constructor(options: {
    config: Config;
    logger: Logger;
    /** The clock a reconnect's gap is measured by (tests). */
    clock?: () => number;
  }) {
    this.config = options.config;
    this.log = options.logger.child({ adapter: SLACK });
    this.facts = new AccessFacts(this.log);
    const settings = options.config.settings;
    this.commands = new SlackCommands({
      operators: new Set(settings.OPERATORS),
      dmOwner: (channel) => this.dmOwner.get(channel),
    });
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
    this.poster = new ReplyPoster({ log: this.log, maxPosts: settings.MAX_REPLY_POSTS });
    this.catchUp = new SlackCatchUp({
      platform: SLACK,
      sink: () => this.sink,
      identities: () => this.identities,
      ownerOf: (channel) => this.ownerOf(channel),
      marks: this.marks,
      max: settings.CATCHUP_MAX,
      forward: (identity, event) => this.forwardMissed(identity, event),
      log: this.log,
    });
    const parents = { apps: this.identities, replyInThread: settings.SLACK_REPLY_IN_THREAD, log: this.log };
    this.parents = new ThreadParents({ ...parents, directory: this.directory });
    this.reconnects = new Reconnects({
      marks: this.marks,
      catchUp: () => this.catchUp.request(),
      clock: options.clock ?? Date.now,
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
    try {
      await this.connect();
    } catch (error) {
      // Leave nothing half-open: the apps that did connect are closed again.
      await this.stop();
      throw error;
    }
    // What was said while the bridge was down is read in the background (Slack's limits make it slow); live
    // messages are answered meanwhile, and each room's backlog once it is read.
    this.catchUp.request();
  }

  private async connect(): Promise<void> {
    await Promise.all(this.identities.map((identity) => identity.authenticate()));
    for (const identity of this.identities) {
      this.directory.addAgent(identity.botUserId, identity.agent);
      identity.build({
        message: async (id, event, teamId) => (await this.onMessage(id, event, teamId)) === 'kept',
        command: async (_identity, command, respond) => {
          if (this.sink) await this.commands.answer(this.sink, command, respond);
        },
        click: async (identity, click, respond) => {
          if (this.sink) await this.commands.click(this.sink, click, identity.botId, respond);
        },
        // Slack resends what a short gap missed; a long one is read (Reconnects).
        disconnected: () => this.reconnects.down(identity.agent),
        reconnected: () => this.reconnects.up(identity.agent),
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
    this.catchUp.stop();
    this.reconnects.stop();
    await Promise.allSettled(this.identities.map((identity) => identity.stop()));
    await this.httpServer?.close();
    await this.catchUp.idle();
    await Promise.allSettled([...this.chains.values()]);
    this.sink = undefined;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    const { channel, threadTs } = parseRoom(message.channel);
    const { identity, render, label } = this.senderOf(channel, message.agent);
    const target = slackTarget(identity, channel, threadTs, message.buttons);
    const { ids, error } = await this.poster.reply(target, render(message.text), label + message.text, options);
    if (error !== undefined) throw postFailed(identity.agent, error);
    this.commands.active(channel, message.channel, this.dmOwner.get(channel));
    if (!threadTs && message.agent && ids[0]) this.parents.posted(channel, ids[0], message.agent, message.text);
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
    this.commands.active(channel, room, this.dmOwner.get(channel));
    return startSlackStream({
      identity,
      channel,
      threadTs,
      render,
      append: (chunks) => this.postChunks(identity, channel, threadTs, chunks),
      postWhole: (text) => this.post({ channel: room, agent, text }),
      echoes: this.echoes,
      log: this.log.child({ agent, room }),
    });
  }

  /** Which app posts for `agent` (null: the bridge) in a conversation, and how its text reads in Slack. */
  /** An answered approval card loses its buttons and says how it ended (chat.update by the app that posted it). */
  readonly closeCard = (room: string, ts: string, text: string) =>
    closeCardMessage(this.senderOf(room, null), parseRoom(room).channel, ts, text);

  private senderOf(channel: string, agent: string | null): Sender {
    const named = agent ? this.identities.find((i) => i.agent === agent) : undefined;
    const identity = named ?? this.ownerOf(channel) ?? this.identities.find((i) => i.control);
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
    const { ids, error } = await this.poster.post(slackTarget(identity, channel, threadTs), chunks, {
      ...(signal ? { signal } : {}),
    });
    if (error !== undefined) throw postFailed(identity.agent, error);
    return ids;
  }

  // ---- inbound ----

  /**
   * A live message is forwarded at once (in order per conversation), whatever a catch-up is reading meanwhile.
   * Resolves with what became of it: Slack is acknowledged only when the bridge keeps it (or ignores it), so a
   * message held in memory while the store cannot write, or not kept, comes again with Slack's next try.
   */
  private onMessage(identity: Identity, event: SlackMessageEvent, teamId: string | undefined): Promise<Receipt> {
    // Not started, or stopping: unacknowledged, Slack sends it again (to this bridge once it is back, or another).
    if (!this.sink) return Promise.resolve('lost');
    if (!event.channel || !event.ts) return Promise.resolve('kept');
    const key = `${teamId ?? identity.teamId}:${event.channel}:${event.ts}`;
    const pending = this.pending.get(key);
    if (pending) return pending;
    const receipt = this.inOrder(event.channel, async () => {
      if (!this.seen.add(key)) return 'kept';
      const receipt = (await this.forward(identity, event))?.receipt ?? 'kept';
      // Not stored yet: Slack's next try of it is forwarded again (the store's unique key keeps it once).
      if (receipt !== 'kept') this.seen.delete(key);
      return receipt;
    });
    this.pending.set(key, receipt);
    void receipt.then(() => this.pending.delete(key));
    return receipt;
  }

  /**
   * A message a catch-up fetched: forwarded once (a live copy of it is then a duplicate), as missed; resolves with the
   * room it went to (undefined: not forwarded).
   */
  private async forwardMissed(identity: Identity, event: SlackMessageEvent): Promise<string | undefined> {
    if (!this.seen.add(`${identity.teamId}:${event.channel}:${event.ts}`)) return undefined;
    return (await this.forward(identity, event, true))?.room;
  }

  /**
   * Runs tasks of one Slack conversation one after another, so name lookups cannot reorder messages; resolves with
   * the task's receipt (`lost` when it failed).
   */
  private inOrder(channel: string, task: () => Promise<Receipt>): Promise<Receipt> {
    const previous = this.chains.get(channel) ?? Promise.resolve();
    const next = previous.then(task).catch((error: unknown): Receipt => {
      this.log.error({ err: error, channel }, 'forwarding a slack message failed');
      return 'lost';
    });
    this.chains.set(channel, next);
    void next.then(() => {
      if (this.chains.get(channel) === next) this.chains.delete(channel);
    });
    return next;
  }

  /** Hands a message to the bridge; resolves with its room and receipt, or undefined when it is not a message to keep. */
  private async forward(
    identity: Identity,
    event: SlackMessageEvent,
    missed = false,
  ): Promise<{ room?: string; receipt: Receipt } | undefined> {
    const sink = this.sink;
    if (!sink) return { receipt: 'lost' };
    const ours = ourApp(event, this.identities);
    // A streamed preview is the bridge's to record (or it was deleted): never a new message.
    if (ours && (await this.echoes.isPreview(event.channel, event.ts))) return undefined;
    // The file a long reply ends with belongs to that reply, already recorded: never a new message.
    if (ours && event.files?.some((file) => file.name === REPLY_FILE_NAME)) return undefined;
    await this.directory.learn(identity.client, userIdsToLearn(event, this.identities));
    const read = toInbound(event, {
      apps: this.identities,
      receiver: identity.agent,
      nameOf: (id) => this.directory.nameOf(id),
      allowedBots: this.allowedBots,
      replyInThread: this.config.settings.SLACK_REPLY_IN_THREAD,
      fileOf: (file) => this.fileOf(identity, file),
    });
    const parsed = read && (await this.parents.read(identity.client, event, read));
    if (!parsed) return undefined;
    const inbound = await this.facts.fill(identity.teamId, identity.client, parsed);
    if (inbound.direct) this.dmOwner.set(event.channel, identity.agent);
    this.commands.active(event.channel, inbound.channel, inbound.direct?.agent);
    const receipt = (await sink.receive(missed ? { ...inbound, missed } : inbound)) ?? 'kept';
    // The room's next catch-up starts after it once the bridge has it (stored, or held while its store cannot write).
    if (!missed) this.marks.forwarded(inbound.channel, event.ts);
    return { room: inbound.channel, receipt };
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

  /** A line `userId` alone sees, from the app that speaks for the bridge in the conversation. */
  async tell(room: string, userId: string, text: string): Promise<boolean> {
    const { channel, threadTs } = parseRoom(room);
    const { identity, render } = this.senderOf(channel, null);
    return postEphemeral(identity, { channel, threadTs }, userId, render(text), this.log);
  }

  /** Answers a command another bridge received, through its response_url. */
  readonly answerCommand = answerByResponseUrl;

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
  readonly resolveChannel = (reference: string) => findChannel(this.identities, reference);
  /** A member of a Slack channel may post in it (an agent acting for them may too). */
  readonly mayPost = (channel: string, userId: string) => isMember(this.identities, channel, userId);
  readonly mayDirect = (userId: string, to: string, room: string) =>
    shareChannel(this.identities, userId, this.directory.idFor(to.replace(/^@/, '')), room);

  /** A DM belongs to one app; only that app can post there. */
  private ownerOf(channel: string): SlackIdentity | undefined {
    const owner = this.dmOwner.get(channel);
    return owner ? this.identities.find((i) => i.agent === owner) : undefined;
  }
}
