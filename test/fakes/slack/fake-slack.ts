import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ReadLimit, ReadLimits } from './read-limits.js';
import { postSigned, type SignedPostOptions } from './signing.js';
import { type ConnectionChoice, SocketHub } from './socket-hub.js';
import type {
  Ack,
  ApiCall,
  ChannelType,
  Delivery,
  FakeApp,
  FakeChannel,
  FakeHuman,
  FakeMessage,
  Fault,
  FileDownload,
  SlashResponse,
} from './types.js';
import { type ApiResult, callWebApi, type WebApiHost } from './web-api.js';
import { Workspace } from './workspace.js';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseArgs(raw: string, contentType: string): Record<string, unknown> {
  if (!raw) return {};
  if (contentType.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(raw));
}

/**
 * A Slack workspace on 127.0.0.1 that the real Bolt talks to: the Web API under
 * `/api/`, Socket Mode WebSockets under `/socket/`, `response_url`s under `/response/`.
 * Several apps share the workspace; every message fans out to each app in its
 * conversation as Slack does (message events, app_mention to mentioned apps, DMs to
 * the one app). HTTP-mode apps (with `requestUrl`) get signed POSTs instead.
 */
export class FakeSlack implements WebApiHost {
  readonly workspace: Workspace;
  readonly deliveries: Delivery[] = [];
  readonly acks: Ack[] = [];
  readonly apiCalls: ApiCall[] = [];
  readonly slashResponses: SlashResponse[] = [];
  /** Requests for files' bytes, oldest first. */
  readonly fileDownloads: FileDownload[] = [];
  /** Apps installed without the `files:read` scope: Slack shows them the sign-in page instead of a file. */
  readonly withoutFilesScope = new Set<string>();
  /** Apps installed without the `files:write` scope: uploads answer `missing_scope`. */
  readonly withoutFilesWrite = new Set<string>();
  /** Files apps uploaded (files.uploadV2), by file id: bytes arrive at the upload URL, then the upload completes. */
  readonly uploads = new Map<string, { app: string; filename: string; content: Buffer | undefined }>();
  private readonly readLimits = new ReadLimits();
  /** Status codes HTTP-mode apps answered to signed event POSTs. */
  readonly httpResults: Array<{ app: string; envelopeId: string; status: number }> = [];
  private readonly server: Server;
  private readonly hub: SocketHub;
  private readonly faults = new Map<string, Fault[]>();
  private readonly waiters = new Set<() => void>();
  private readonly responseUrls = new Map<string, string>();
  private port = 0;

  constructor(teamId?: string) {
    this.workspace = new Workspace(teamId);
    this.hub = new SocketHub(
      (app, envelopeId, payload) => {
        this.acks.push({ app, envelopeId, payload, at: performance.now() });
        this.notify();
      },
      () => this.notify(),
      (envelopeId, reason, connection) => this.retryUnacked(envelopeId, reason, connection),
    );
    this.server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The Web API base, trailing slash included (Bolt's `slackApiUrl`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  // ---- workspace setup ----

  addApp(name: string, options: { requestUrl?: string } = {}): FakeApp {
    const app = this.workspace.addApp(name);
    app.requestUrl = options.requestUrl;
    return app;
  }

  /** A user group of these people; its id (`S…`). */
  addUserGroup(handle: string, people: readonly FakeHuman[]): string {
    return this.workspace.addUserGroup(
      handle,
      people.map((p) => p.id),
    );
  }

  addHuman(name: string, displayName?: string): FakeHuman {
    return this.workspace.addHuman(name, displayName);
  }

  addChannel(name: string, members: ReadonlyArray<string | FakeApp | FakeHuman>, type?: ChannelType): FakeChannel {
    const ids = members.map((m) => (typeof m === 'string' ? m : 'botUserId' in m ? m.botUserId : m.id));
    return this.workspace.addChannel(name, ids, type);
  }

  dm(app: FakeApp, human: FakeHuman): FakeChannel {
    return this.workspace.dm(app, human.id);
  }

  app(name: string): FakeApp {
    const app = this.workspace.apps.get(name);
    if (!app) throw new Error(`fake slack: no app ${name}`);
    return app;
  }

  /** Reading history as a non-Marketplace app: `perWindow` requests per window per method, `maxItems` a page. */
  limitReads(limit: ReadLimit | undefined): void {
    this.readLimits.limit = limit;
  }

  readPageSize(asked: number): number {
    return this.readLimits.pageSize(asked);
  }

  /** Slack refreshes an app's Socket Mode connections: they close, and the app opens a new one. */
  dropConnections(app: string): void {
    this.hub.drop(app);
  }

  /** Whether an app has an open Socket Mode connection now. */
  isConnected(app: string): boolean {
    return this.hub.count(app) > 0;
  }

  /**
   * Events for an app with no connection are lost (true), as when the app was away longer than Slack retries
   * (nearly at once, a minute later, five minutes later); kept and delivered on its next connection (false, the
   * default), as Slack's retries do after a short gap.
   */
  loseUndelivered(lose: boolean): void {
    this.hub.loseUndelivered = lose;
  }

  /**
   * How Socket Mode hands out envelopes when an app has several connections (several bridges on one app): `choice`
   * says which open connection gets each one (`newest`, the default, or `round-robin`: each in turn, as Slack spreads
   * an app's events over its connections); with `redeliverAfterMs`, an envelope not acknowledged in that time, or
   * left unacknowledged on a connection that closed, is sent again (a new envelope id, `retry_attempt` one more,
   * `retry_reason`), at most 3 times, as Slack retries.
   */
  socketMode(options: { choice?: ConnectionChoice; redeliverAfterMs?: number }): void {
    if (options.choice) this.hub.choice = options.choice;
    if (options.redeliverAfterMs !== undefined) this.hub.redeliverAfterMs = options.redeliverAfterMs;
  }

  /** Makes the next call(s) of a Web API method fail in the given way, in order. */
  fail(method: string, ...faults: Fault[]): void {
    this.faults.set(method, [...(this.faults.get(method) ?? []), ...faults]);
  }

  /** The faults planned for a method and not yet served are dropped: its calls work again. */
  recover(method: string): void {
    this.faults.delete(method);
  }

  // ---- things people do ----

  /** A human writes in a conversation (optionally in a thread); the message fans out. */
  say(human: FakeHuman, channel: FakeChannel, text: string, options: { threadTs?: string } = {}): FakeMessage {
    const message = this.workspace.addMessage({
      channel: channel.id,
      text,
      user: human.id,
      threadTs: options.threadTs,
      botId: undefined,
      appId: undefined,
      via: 'human',
    });
    this.publish(message);
    return message;
  }

  /** A human shares an earlier message into a conversation, with or without a comment ("Share message"). */
  share(human: FakeHuman, channel: FakeChannel, original: FakeMessage, comment = ''): FakeMessage {
    const message = this.workspace.addMessage({
      channel: channel.id,
      text: comment,
      user: human.id,
      threadTs: undefined,
      botId: undefined,
      appId: undefined,
      via: 'human',
      attachments: [this.workspace.shareAttachment(original)],
    });
    this.publish(message);
    return message;
  }

  /**
   * A human uploads files into a conversation, with or without a comment: a `file_share` message whose `files`
   * point at the fake's file host (which wants a bot token of an app in the conversation).
   */
  upload(
    human: FakeHuman,
    channel: FakeChannel,
    files: readonly { name: string; mimetype: string; content: Buffer | string }[],
    comment = '',
  ): FakeMessage {
    const message = this.workspace.addMessage({
      channel: channel.id,
      text: comment,
      user: human.id,
      threadTs: undefined,
      botId: undefined,
      appId: undefined,
      via: 'human',
      subtype: 'file_share',
      files: files.map((file) =>
        this.workspace.addFile(
          { name: file.name, mimetype: file.mimetype, content: Buffer.from(file.content), channel: channel.id },
          human.id,
          this.baseUrl,
        ),
      ),
    });
    this.publish(message);
    return message;
  }

  /** Slackbot writes in a conversation (its notices land in an app's DM too); it has no bot id. */
  slackbot(channel: FakeChannel, text: string): FakeMessage {
    const message = this.workspace.addMessage({
      channel: channel.id,
      text,
      user: 'USLACKBOT',
      threadTs: undefined,
      botId: undefined,
      appId: undefined,
      via: 'human',
    });
    this.publish(message);
    return message;
  }

  /**
   * An interactive payload (a button in a block, a shortcut, a modal submission) sent to one app as Slack does:
   * a Socket Mode `interactive` envelope, or a signed form POST with `payload=<json>` in HTTP mode.
   * `payload` is the type-specific part; the team, the app and a token are filled in. Returns the envelope id.
   */
  interactive(app: FakeApp, payload: Record<string, unknown>): string {
    const envelopeId = randomUUID();
    const body = {
      token: 'verification-token',
      api_app_id: app.appId,
      team: { id: this.workspace.teamId, domain: 'fake' },
      enterprise: null,
      is_enterprise_install: false,
      trigger_id: randomUUID(),
      ...payload,
    };
    const envelope = { envelope_id: envelopeId, type: 'interactive', accepts_response_payload: false, payload: body };
    this.deliver(app, envelopeId, 'interactive', envelope);
    return envelopeId;
  }

  /**
   * A human clicks a button in a message an app posted: a `block_actions` payload, sent to the app whose message it
   * is, with the message as Slack shows it (its blocks; `thread_ts` in a thread), the `container` (`channel_id`,
   * `message_ts`, and `thread_ts` in a thread), the clicker and the button's `action_id` and `value`. Slack sends
   * only a button the message has, only to its app: `forged` sends any `actionId`/`value` to any app (and
   * `channelId`, a `channel` other than the message's). Without a
   * `message`, a button of a message the app posted and the fake did not keep, in `channel`.
   */
  blockAction(
    app: FakeApp,
    options: {
      user: FakeHuman;
      channel?: FakeChannel;
      message?: FakeMessage;
      actionId: string;
      value?: string;
      forged?: boolean;
      /** A forged payload's `channel.id`, another than the message's. */
      channelId?: string;
    },
  ): string {
    const responseId = randomUUID();
    this.responseUrls.set(responseId, app.name);
    const found = options.message;
    const button = found?.blocks
      ?.flatMap((block) =>
        block.type === 'actions'
          ? (block.elements as Record<string, unknown>[]).map(
              (e): Record<string, unknown> => ({ ...e, block_id: block.block_id }),
            )
          : [],
      )
      .find((element) => element.action_id === options.actionId);
    if (found && !options.forged && (found.botId !== app.botId || !button)) {
      throw new Error(`fake slack: ${app.name}'s message ${found.ts} has no button ${options.actionId}`);
    }
    const ts = found?.ts ?? this.workspace.nextTs();
    const channelId = found?.channel ?? options.channel?.id ?? '';
    const channel = this.workspace.channels.get(channelId);
    const message = found
      ? this.workspace.historyItem(found)
      : { type: 'message', ts, text: 'Approve the deploy?', user: app.botUserId, bot_id: app.botId };
    const threadTs = found?.threadTs;
    return this.interactive(app, {
      type: 'block_actions',
      user: {
        id: options.user.id,
        username: options.user.name,
        name: options.user.name,
        team_id: this.workspace.teamId,
      },
      container: {
        type: 'message',
        message_ts: ts,
        channel_id: channelId,
        is_ephemeral: false,
        ...(threadTs ? { thread_ts: threadTs } : {}),
      },
      channel: {
        id: options.channelId ?? channelId,
        name: channel?.type === 'im' ? 'directmessage' : (channel?.name ?? ''),
      },
      message,
      state: { values: {} },
      response_url: `${this.baseUrl}/response/${responseId}`,
      actions: [
        {
          action_id: options.actionId,
          block_id: typeof button?.block_id === 'string' ? button.block_id : 'b1',
          text: button?.text ?? { type: 'plain_text', text: 'Approve', emoji: true },
          value: options.value ?? (typeof button?.value === 'string' ? button.value : 'yes'),
          ...(typeof button?.style === 'string' ? { style: button.style } : {}),
          type: 'button',
          action_ts: this.workspace.nextTs(),
        },
      ],
    });
  }

  /** A human runs a global shortcut from the shortcut menu (a `shortcut` payload). */
  shortcut(app: FakeApp, options: { user: FakeHuman; callbackId: string }): string {
    return this.interactive(app, {
      type: 'shortcut',
      action_ts: this.workspace.nextTs(),
      user: { id: options.user.id, username: options.user.name, team_id: this.workspace.teamId },
      callback_id: options.callbackId,
    });
  }

  /** A human edits an earlier message: apps get `message_changed`. */
  edit(message: FakeMessage, text: string): void {
    const previous = message.text;
    message.text = text;
    message.edited = true;
    this.publishChanged(message, previous);
  }

  /** Someone joins a channel: apps get a `channel_join` message. */
  join(channel: FakeChannel, who: FakeHuman | FakeApp): void {
    const id = 'botUserId' in who ? who.botUserId : who.id;
    channel.members.add(id);
    this.fanOut(channel.id, () => this.workspace.joinEvent(channel.id, id));
  }

  /** A slash command typed in a conversation, sent to one app; resolves with the envelope id. */
  slashCommand(
    app: FakeApp,
    options: { command: string; text?: string; user: FakeHuman; channel: FakeChannel },
  ): string {
    const envelopeId = randomUUID();
    const responseId = randomUUID();
    this.responseUrls.set(responseId, app.name);
    const payload = {
      token: 'verification-token',
      team_id: this.workspace.teamId,
      team_domain: 'fake',
      channel_id: options.channel.id,
      channel_name: options.channel.name,
      user_id: options.user.id,
      user_name: options.user.name,
      command: options.command,
      text: options.text ?? '',
      api_app_id: app.appId,
      is_enterprise_install: 'false',
      response_url: `${this.baseUrl}/response/${responseId}`,
      trigger_id: randomUUID(),
    };
    const envelope = { envelope_id: envelopeId, type: 'slash_commands', accepts_response_payload: true, payload };
    this.deliver(app, envelopeId, 'slash_commands', envelope);
    return envelopeId;
  }

  /** Sends an envelope again, as Slack does when an ack came late (Socket Mode or HTTP). */
  redeliver(envelopeId: string, options: { attempt?: number; reason?: string; avoid?: number } = {}): void {
    const original = this.deliveries.find((d) => d.envelopeId === envelopeId);
    if (!original) throw new Error(`fake slack: no envelope ${envelopeId}`);
    const envelope = {
      ...original.envelope,
      envelope_id: randomUUID(),
      retry_attempt: options.attempt ?? 1,
      retry_reason: options.reason ?? 'timeout',
    };
    this.deliver(this.app(original.app), envelope.envelope_id, original.type, envelope, options.avoid);
  }

  /** POSTs an events_api body to an HTTP-mode app, signed (or forged), and resolves with the status. */
  async postEvent(
    app: FakeApp,
    event: Record<string, unknown>,
    options: SignedPostOptions = {},
  ): Promise<{ status: number; body: string }> {
    if (!app.requestUrl) throw new Error(`fake slack: app ${app.name} has no requestUrl`);
    const body = JSON.stringify(this.callbackBody(app, event));
    return postSigned(app.requestUrl, app.signingSecret, body, 'application/json', options);
  }

  // ---- observing ----

  /** Messages the apps posted and did not delete (newest last), optionally in one conversation. */
  posts(channel?: FakeChannel | string): FakeMessage[] {
    const id = typeof channel === 'string' ? channel : channel?.id;
    return this.workspace.messages.filter((m) => m.via !== 'human' && (id === undefined || m.channel === id));
  }

  /** Web API calls of one method (e.g. `chat.update`), oldest first, optionally by one app. */
  calls(method: string, app?: string): ApiCall[] {
    return this.apiCalls.filter((call) => call.method === method && (app === undefined || call.app === app));
  }

  /** Resolves with the first truthy value of `probe`; rejects after `timeoutMs`. */
  waitFor<T>(probe: () => T | undefined | false | null, timeoutMs = 5000, what = 'condition'): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake slack: timed out waiting for ${what}`));
      }, timeoutMs);
      // Re-checked on every change here, and now and then for state outside the fake (a sink, a store).
      const poll = setInterval(check, 5);
      const cleanup = () => {
        clearTimeout(timer);
        clearInterval(poll);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once every app in `names` has an open Socket Mode connection. */
  connected(...names: string[]): Promise<true> {
    return this.waitFor(() => names.every((n) => this.hub.count(n) > 0), 5000, 'connections');
  }

  async close(): Promise<void> {
    this.hub.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- WebApiHost ----

  socketUrl(app: FakeApp): string {
    return `ws://127.0.0.1:${this.port}/socket/${app.appId}?ticket=${randomUUID()}`;
  }

  publish(message: FakeMessage): void {
    const mentioned = new Set([...message.text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1]));
    const channel = this.workspace.channels.get(message.channel);
    for (const app of this.workspace.memberApps(message.channel)) {
      this.sendEvent(app, this.workspace.messageEvent(message));
      // Slack sends no app_mention in a DM; in channels a mentioned member app gets both.
      if (channel?.type !== 'im' && mentioned.has(app.botUserId)) {
        this.sendEvent(app, this.workspace.appMentionEvent(message));
      }
    }
    this.notify();
  }

  publishChanged(message: FakeMessage, previousText: string): void {
    const ts = this.workspace.nextTs();
    message.editedTs = ts;
    this.fanOut(message.channel, () => this.workspace.changedEvent(message, previousText, ts));
  }

  publishDeleted(message: FakeMessage): void {
    this.fanOut(message.channel, () => this.workspace.deletedEvent(message));
  }

  // ---- internals ----

  private fanOut(channelId: string, build: () => Record<string, unknown>): void {
    for (const app of this.workspace.memberApps(channelId)) this.sendEvent(app, build());
    this.notify();
  }

  private callbackBody(app: FakeApp, event: Record<string, unknown>): Record<string, unknown> {
    return {
      token: 'verification-token',
      team_id: this.workspace.teamId,
      api_app_id: app.appId,
      event,
      type: 'event_callback',
      event_id: `Ev${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [
        {
          enterprise_id: null,
          team_id: this.workspace.teamId,
          user_id: app.botUserId,
          is_bot: true,
          is_enterprise_install: false,
        },
      ],
      is_ext_shared_channel: false,
      event_context: randomUUID(),
    };
  }

  private sendEvent(app: FakeApp, event: Record<string, unknown>): void {
    const envelopeId = randomUUID();
    const envelope = {
      envelope_id: envelopeId,
      type: 'events_api',
      accepts_response_payload: false,
      retry_attempt: 0,
      retry_reason: '',
      payload: this.callbackBody(app, event),
    };
    this.deliver(app, envelopeId, 'events_api', envelope);
  }

  private deliver(
    app: FakeApp,
    envelopeId: string,
    type: Delivery['type'],
    envelope: Record<string, unknown>,
    avoid?: number,
  ): void {
    const delivery: Delivery = { app: app.name, envelopeId, type, envelope, sentAt: performance.now() };
    this.deliveries.push(delivery);
    if (app.requestUrl) {
      void this.deliverHttp(app, envelopeId, type, envelope);
    } else {
      delivery.connection = this.hub.send(app.name, JSON.stringify(envelope), envelopeId, avoid);
    }
    this.notify();
  }

  /** Slack sends an envelope it stopped waiting for again, up to 3 retries. */
  private retryUnacked(envelopeId: string, reason: 'timeout' | 'connection_closed', connection: number): void {
    const original = this.deliveries.find((d) => d.envelopeId === envelopeId);
    if (!original) return;
    const attempt = Number(original.envelope.retry_attempt ?? 0) + 1;
    if (attempt > 3) return;
    this.redeliver(envelopeId, { attempt, reason, avoid: connection });
  }

  private async deliverHttp(
    app: FakeApp,
    envelopeId: string,
    type: Delivery['type'],
    envelope: Record<string, unknown>,
  ): Promise<void> {
    const url = app.requestUrl ?? '';
    const payload = envelope.payload as Record<string, unknown>;
    const retry = Number(envelope.retry_attempt ?? 0);
    const options: SignedPostOptions =
      retry > 0 ? { retryNum: retry, retryReason: String(envelope.retry_reason ?? 'timeout') } : {};
    const form = 'application/x-www-form-urlencoded';
    const [body, contentType] =
      type === 'slash_commands'
        ? [new URLSearchParams(payload as Record<string, string>).toString(), form]
        : type === 'interactive'
          ? [new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), form]
          : [JSON.stringify(payload), 'application/json'];
    try {
      const result = await postSigned(url, app.signingSecret, body, contentType, options);
      this.httpResults.push({ app: app.name, envelopeId, status: result.status });
      let ackPayload: Record<string, unknown> | undefined;
      if (result.body) {
        try {
          ackPayload = JSON.parse(result.body) as Record<string, unknown>;
        } catch {
          ackPayload = { text: result.body };
        }
      }
      if (result.status === 200)
        this.acks.push({ app: app.name, envelopeId, payload: ackPayload, at: performance.now() });
    } catch {
      this.httpResults.push({ app: app.name, envelopeId, status: 0 });
    }
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const appId = /^\/socket\/([A-Z0-9]+)$/.exec(url.pathname)?.[1];
    const app = [...this.workspace.apps.values()].find((a) => a.appId === appId);
    if (app) this.hub.upgrade(app, req, socket, head);
    else socket.destroy();
  }

  /**
   * Serves a file's bytes to a bot token of an app in the file's conversation. Anyone else gets what Slack gives a
   * request it cannot authorise for files: 200 with the sign-in page.
   */
  private serveFile(req: IncomingMessage, res: ServerResponse, pathname: string): void {
    const id = /^\/files-pri\/[A-Z0-9]+-(F[0-9]+)\//.exec(pathname)?.[1] ?? '';
    const file = this.workspace.files.get(id);
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const app = this.workspace.appByToken(token);
    const member = file && app && this.workspace.channels.get(file.channel)?.members.has(app.botUserId);
    const record = (status: number, served: FileDownload['served']) => {
      this.fileDownloads.push({ fileId: id, app: app?.name, status, served });
      this.notify();
    };
    if (!file) {
      record(404, 'none');
      return void res.writeHead(404).end();
    }
    if (!member || token !== app.botToken || this.withoutFilesScope.has(app.name)) {
      record(200, 'sign-in page');
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>');
    }
    record(200, 'file');
    // The file host serves a sane type; the one the uploader's client claimed (any text at all) is only in the event.
    const served = /^[\w.+-]+\/[\w.+-]+$/.test(file.mimetype) ? file.mimetype : 'application/octet-stream';
    res.writeHead(200, { 'content-type': served, 'content-length': String(file.content.byteLength) });
    res.end(file.content);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (req.method === 'GET' && url.pathname.startsWith('/files-pri/')) return this.serveFile(req, res, url.pathname);
    const raw = await readBody(req);
    const contentType = String(req.headers['content-type'] ?? '');
    const response = /^\/response\/([0-9a-f-]+)$/.exec(url.pathname);
    if (response) {
      const app = this.responseUrls.get(response[1] ?? '');
      if (!app) return void res.writeHead(404).end();
      this.slashResponses.push({ app, body: parseArgs(raw, contentType) });
      this.notify();
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
    const upload = /^\/upload\/(F[0-9A-Z]+)$/.exec(url.pathname);
    if (upload && req.method === 'POST') return this.receiveUpload(upload[1] ?? '', raw, contentType, res);
    const api = /^\/api\/([A-Za-z.]+)$/.exec(url.pathname);
    if (!api || req.method !== 'POST') return void res.writeHead(404).end();
    const method = api[1] ?? '';
    const args = parseArgs(raw, contentType);
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const token = bearer ?? (typeof args.token === 'string' ? args.token : undefined);
    const caller = this.workspace.appByToken(token);
    const { token: _omitted, ...recorded } = args;
    const fault = this.faults.get(method)?.shift();
    const record = (status: number) =>
      this.apiCalls.push({ method, app: caller?.name, args: recorded, contentType, status, at: performance.now() });

    if (fault?.kind === 'rate-limit') {
      record(429);
      this.notify();
      return void res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': String(fault.retryAfterS) })
        .end(JSON.stringify({ ok: false, error: 'ratelimited' }));
    }
    if (fault?.kind === 'http') {
      record(fault.status);
      this.notify();
      return void res.writeHead(fault.status, { 'content-type': 'text/plain' }).end('Service Unavailable');
    }
    if (fault?.kind === 'error') {
      record(200);
      this.notify();
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: false, error: fault.error }));
    }
    const wait = caller ? this.readLimits.check(caller.name, method) : undefined;
    if (wait !== undefined) {
      record(429);
      this.notify();
      return void res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': String(wait) })
        .end(JSON.stringify({ ok: false, error: 'ratelimited' }));
    }
    const result =
      caller && method.startsWith('files.') && method.endsWith('External')
        ? this.fileMethod(method, args, caller)
        : callWebApi(this, method, args, caller, token);
    record(result.status);
    this.notify();
    if (fault?.kind === 'drop-after') {
      req.socket.destroy();
      return;
    }
    res.writeHead(result.status, { 'content-type': 'application/json', ...result.headers });
    res.end(JSON.stringify(result.body));
  }

  /** files.getUploadURLExternal and files.completeUploadExternal: the calls around an upload (files.uploadV2). */
  private fileMethod(method: string, args: Record<string, unknown>, caller: FakeApp): ApiResult {
    const fail = (error: string, extra: Record<string, unknown> = {}): ApiResult => ({
      status: 200,
      body: { ok: false, error, ...extra },
    });
    if (this.withoutFilesWrite.has(caller.name))
      return fail('missing_scope', { needed: 'files:write', provided: 'chat:write' });
    if (method === 'files.getUploadURLExternal') {
      const id = `F${String(this.uploads.size + 1).padStart(9, '0')}U`;
      this.uploads.set(id, { app: caller.name, filename: String(args.filename ?? 'file'), content: undefined });
      return { status: 200, body: { ok: true, upload_url: `${this.baseUrl}/upload/${id}`, file_id: id } };
    }
    if (method === 'files.completeUploadExternal') {
      const files = JSON.parse(String(args.files ?? '[]')) as Array<{ id: string; title?: string }>;
      const channel = this.workspace.channels.get(String(args.channel_id ?? ''));
      if (!channel) return fail('channel_not_found');
      const described = [];
      for (const entry of files) {
        const upload = this.uploads.get(entry.id);
        if (!upload?.content) return fail('file_not_found');
        described.push(
          this.workspace.addFile(
            { name: upload.filename, mimetype: 'text/markdown', content: upload.content, channel: channel.id },
            caller.botUserId,
            this.baseUrl,
          ),
        );
      }
      const message = this.workspace.addMessage({
        channel: channel.id,
        text: String(args.initial_comment ?? ''),
        user: caller.botUserId,
        threadTs: typeof args.thread_ts === 'string' && args.thread_ts ? args.thread_ts : undefined,
        botId: caller.botId,
        appId: caller.appId,
        via: 'chat.postMessage',
        subtype: 'file_share',
        files: described,
      });
      this.publish(message);
      return { status: 200, body: { ok: true, files: files.map((f) => ({ id: f.id, title: f.title ?? '' })) } };
    }
    return fail('unknown_method');
  }

  /** The bytes of an upload, POSTed to the URL files.getUploadURLExternal gave (raw, or one multipart file). */
  private async receiveUpload(fileId: string, raw: string, contentType: string, res: ServerResponse): Promise<void> {
    const upload = this.uploads.get(fileId);
    if (!upload) return void res.writeHead(404).end();
    let content = Buffer.from(raw, 'utf8');
    if (contentType.startsWith('multipart/form-data')) {
      const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
      const part = [...form.values()].find((value) => typeof value !== 'string');
      if (part && typeof part !== 'string') content = Buffer.from(await part.arrayBuffer());
    }
    upload.content = content;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${content.length}`);
  }
}

/** Starts a fake Slack workspace on 127.0.0.1. */
export async function startFakeSlack(options: { teamId?: string } = {}): Promise<FakeSlack> {
  const fake = new FakeSlack(options.teamId);
  await fake.listen();
  return fake;
}
