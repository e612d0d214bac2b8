/**
 * The fake REST API (`/api/v10/...`): the routes discord.js and the adapter call, with Discord's status codes,
 * `enforce_nonce` idempotency, and injectable 429s carrying the headers discord.js reads.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeGateway } from './gateway.js';
import { channelJson, messageJson, userJson } from './payloads.js';
import {
  type AllowedMentions,
  ChannelType,
  type FakeBot,
  type FakeComponentRow,
  type FakeMessage,
  type World,
} from './world.js';

/** How long Discord remembers a nonce for `enforce_nonce` (a few minutes). */
const NONCE_TTL_MS = 5 * 60_000;

export interface RecordedRequest {
  readonly method: string;
  /** Path below `/api/v10`, e.g. `/channels/123/messages`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly botId: string | undefined;
  readonly body: unknown;
}

export interface RateLimitRule {
  readonly method?: string;
  /** Matches paths containing this text (all paths when absent). */
  readonly path?: string;
  remaining: number;
  readonly retryAfterMs: number;
  readonly global: boolean;
}

/** Requests refused with an error status (and not carried out), while `remaining` lasts. */
export interface FailureRule {
  readonly method?: string;
  readonly path?: string;
  remaining: number;
  readonly status: number;
  /** Discord's JSON error code (0 for a server error). */
  readonly code: number;
}

export interface InteractionReply {
  readonly content: string;
  readonly ephemeral: boolean;
  /** Whether the reply came after a deferral (DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, then an edit). */
  readonly deferred: boolean;
}

export interface PendingInteraction {
  readonly applicationId: string;
  deferredFlags: number | null;
  readonly resolve: (reply: InteractionReply) => void;
}

export interface RestContext {
  readonly world: World;
  readonly gateway: FakeGateway;
  readonly requests: RecordedRequest[];
  readonly rateLimits: RateLimitRule[];
  readonly failures: FailureRule[];
  /** How many of the next message posts are created but answered 502, as if the response were lost. */
  lostResponses: number;
  /** Bots lack Attach Files: a message with files is refused (403, 50013). */
  refuseAttachments: boolean;
  /** Channel id → how many of its next message posts are refused (403, 50013), as when a bot lost Send Messages. */
  readonly refusedPosts: Map<string, number>;
  /** Interactions awaiting their reply, by token. */
  readonly interactions: Map<string, PendingInteraction>;
  /** Follow-up messages sent after an interaction's reply (`POST /webhooks/{app}/{token}`), in order. */
  readonly followUps: Array<{ readonly token: string; readonly content: string; readonly ephemeral: boolean }>;
  readonly commands: Map<string, unknown[]>;
  gatewayUrl(): string;
  /** Fans a new message out to the bots that can see it. */
  publish(message: FakeMessage): void;
  /** Sends MESSAGE_UPDATE (the whole message, plus `extra` fields) to the bots that can see it. */
  update(message: FakeMessage, extra?: Record<string, unknown>): void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Files sent with a message as multipart/form-data (`files[n]` parts beside `payload_json`). */
export interface UploadedFile {
  readonly filename: string;
  readonly contentType: string;
  readonly content: Buffer;
}

/** Discord's default upload limit per file for a bot (10 MiB). */
const UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const type = String(request.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) return readMultipart(Buffer.concat(chunks), type);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 50109, 'The request body contains invalid JSON.');
  }
}

/** A message with files, as discord.js sends it: the JSON body in `payload_json`, each file in `files[n]`. */
async function readMultipart(raw: Buffer, type: string): Promise<unknown> {
  const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
  const payload = form.get('payload_json');
  const body = typeof payload === 'string' ? (JSON.parse(payload) as Record<string, unknown>) : {};
  const files: UploadedFile[] = [];
  for (const [name, value] of form.entries()) {
    if (!/^files\[\d+\]$/.test(name) || typeof value === 'string') continue;
    const content = Buffer.from(await value.arrayBuffer());
    if (content.length > UPLOAD_LIMIT_BYTES) throw new HttpError(413, 40005, 'Request entity too large');
    files.push({ filename: value.name, contentType: value.type || 'application/octet-stream', content });
  }
  return { ...body, files };
}

function send(response: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    response.writeHead(status, headers).end();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

export async function handleRest(context: RestContext, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://fake');
  // discord.js encodes path parts (`@original` arrives as `%40original`).
  const match = /^\/api\/v\d+(\/.*)$/.exec(decodeURIComponent(url.pathname));
  if (!match?.[1]) return send(response, 404, { code: 0, message: '404: Not Found' });
  const path = match[1];
  const method = request.method ?? 'GET';
  try {
    const body = await readBody(request);
    const bot = context.world.botByToken(request.headers.authorization);
    context.requests.push({ method, path, query: url.searchParams, botId: bot?.id, body });

    const limit = context.rateLimits.find(
      (rule) =>
        rule.remaining > 0 && (!rule.method || rule.method === method) && (!rule.path || path.includes(rule.path)),
    );
    if (limit) {
      limit.remaining -= 1;
      const seconds = (limit.retryAfterMs / 1000).toFixed(3);
      return send(
        response,
        429,
        { message: 'You are being rate limited.', retry_after: limit.retryAfterMs / 1000, global: limit.global },
        {
          'retry-after': seconds,
          'x-ratelimit-reset-after': seconds,
          'x-ratelimit-scope': limit.global ? 'global' : 'user',
          ...(limit.global ? { 'x-ratelimit-global': 'true' } : {}),
        },
      );
    }

    const failure = context.failures.find(
      (rule) =>
        rule.remaining > 0 && (!rule.method || rule.method === method) && (!rule.path || path.includes(rule.path)),
    );
    if (failure) {
      failure.remaining -= 1;
      const message = failure.status >= 500 ? `${failure.status}: Internal Server Error` : 'Missing Access';
      return send(response, failure.status, { message, code: failure.code });
    }

    // Interaction callbacks and webhook edits authenticate by the interaction token, not the bot token.
    const callback = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
    if (callback && method === 'POST') return interactionCallback(context, callback[2] ?? '', body, response);
    const original = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path);
    if (original && method === 'PATCH') return editOriginal(context, original[2] ?? '', body, response);
    const followUp = /^\/webhooks\/(\d+)\/([^/]+)$/.exec(path);
    if (followUp && method === 'POST')
      return sendFollowUp(context, followUp[1] ?? '', followUp[2] ?? '', body, response);

    if (!bot) throw new HttpError(401, 0, '401: Unauthorized');
    return route(context, bot, method, path, url.searchParams, body, response);
  } catch (error) {
    if (error instanceof HttpError) return send(response, error.status, { code: error.code, message: error.message });
    return send(response, 500, { code: 0, message: String(error) });
  }
}

function route(
  context: RestContext,
  bot: FakeBot,
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
  response: ServerResponse,
) {
  const { world } = context;
  if (method === 'GET' && path === '/gateway/bot') {
    return send(response, 200, {
      url: context.gatewayUrl(),
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
    });
  }
  if (method === 'GET' && path === '/users/@me') return send(response, 200, userJson(bot));
  if (method === 'GET' && (path === '/applications/@me' || path === '/oauth2/applications/@me')) {
    return send(response, 200, { id: bot.applicationId, name: bot.username, bot: userJson(bot), flags: 0 });
  }
  if (method === 'POST' && path === '/users/@me/channels') {
    const recipient = String((body as { recipient_id?: unknown })?.recipient_id ?? '');
    if (!world.user(recipient)) throw new HttpError(400, 50035, 'Invalid Form Body');
    return send(response, 200, channelJson(world, world.dmChannel(recipient, bot.id)));
  }
  const commands = /^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/.exec(path);
  if (commands && method === 'PUT') {
    if (commands[1] !== bot.applicationId) throw new HttpError(403, 50001, 'Missing Access');
    const list = (Array.isArray(body) ? body : []).map((command: Record<string, unknown>) => ({
      id: world.ids.next(),
      application_id: bot.applicationId,
      version: world.ids.next(),
      type: 1,
      ...command,
      ...(commands[2] ? { guild_id: commands[2] } : {}),
    }));
    context.commands.set(`${bot.applicationId}:${commands[2] ?? 'global'}`, list);
    return send(response, 200, list);
  }

  const channelPath = /^\/channels\/(\d+)(\/.*)?$/.exec(path);
  const channel = channelPath?.[1] ? world.channels.get(channelPath[1]) : undefined;
  if (!channelPath || !channel || !world.canSee(bot, channel)) throw new HttpError(404, 10003, 'Unknown Channel');
  const rest = channelPath[2] ?? '';
  if (method === 'GET' && rest === '') return send(response, 200, channelJson(world, channel));
  if (method === 'POST' && rest === '/typing') return send(response, 204);
  if (method === 'GET' && rest === '/messages') {
    const after = query.get('after');
    const before = query.get('before');
    const limit = Math.min(Number(query.get('limit') ?? 50), 100);
    let list = world.messages.filter((message) => message.channelId === channel.id);
    if (after) {
      // Discord returns the `limit` oldest messages after the id, newest first.
      list = list.filter((message) => BigInt(message.id) > BigInt(after)).slice(0, limit);
    } else if (before) {
      // ...and the `limit` newest before it, newest first.
      list = list.filter((message) => BigInt(message.id) < BigInt(before)).slice(-limit);
    } else {
      list = list.slice(-limit);
    }
    return send(
      response,
      200,
      list.reverse().map((message) => messageJson(world, message, { gateway: false })),
    );
  }
  if (method === 'POST' && rest === '/messages') return postMessage(context, bot, channel.id, body, response);
  const one = /^\/messages\/(\d+)$/.exec(rest);
  const target = one ? world.message(one[1] ?? '') : undefined;
  if (one && (!target || target.channelId !== channel.id)) throw new HttpError(404, 10008, 'Unknown Message');
  if (target && method === 'DELETE') {
    // Bots here have no Manage Messages: each deletes only its own messages.
    if (target.authorId !== bot.id) throw new HttpError(403, 50013, 'Missing Permissions');
    world.deleteMessage(target);
    context.gateway.dispatch(
      'MESSAGE_DELETE',
      { id: target.id, channel_id: target.channelId, ...guildIdOf(context, target) },
      visibleBots(context, target),
    );
    return send(response, 204);
  }
  if (target && method === 'PATCH') {
    const message = target;
    if (message.authorId !== bot.id) throw new HttpError(403, 50005, 'Cannot edit a message authored by another user');
    const content = (body as { content?: unknown })?.content;
    if (typeof content === 'string') {
      if (content.trim() === '') throw new HttpError(400, 50006, 'Cannot send an empty message');
      if (content.length > 2000) throw new HttpError(400, 50035, 'Invalid Form Body: content over 2000');
      // An edit changes the mentions shown but never pings anyone (Discord notifies on create only).
      const replied = message.mentionIds.filter((id) => !world.mentionsIn(message.content).includes(id));
      message.content = content;
      message.mentionIds = [...new Set([...world.mentionsIn(content), ...replied])];
      message.edits.push(content);
    }
    const components = componentsOf((body as { components?: unknown })?.components);
    if (components) message.components = components;
    message.editedAt = world.clock();
    context.update(message);
    return send(response, 200, messageJson(world, message, { gateway: false }));
  }
  throw new HttpError(404, 0, `404: no fake route for ${method} ${path}`);
}

/**
 * A message's `components` as Discord checks them: at most 5 action rows (type 1) of at most 5 buttons (type 2);
 * a button has a label (80 characters at most) and, unless it is a link (style 5, with a url), a `custom_id` of at
 * most 100 characters, unique in the message. Anything else is 400 Invalid Form Body.
 */
function componentsOf(raw: unknown): FakeComponentRow[] | undefined {
  if (raw === undefined) return undefined;
  const invalid = (why: string) => new HttpError(400, 50035, `Invalid Form Body: components: ${why}`);
  if (!Array.isArray(raw) || raw.length > 5) throw invalid('at most 5 action rows');
  const ids = new Set<string>();
  for (const row of raw as Array<{ type?: unknown; components?: unknown }>) {
    if (row?.type !== 1 || !Array.isArray(row.components) || row.components.length === 0) {
      throw invalid('each row is an action row (type 1) with components');
    }
    if (row.components.length > 5) throw invalid('at most 5 buttons in a row');
    for (const button of row.components as Array<Record<string, unknown>>) {
      if (button?.type !== 2) throw invalid('only buttons (type 2) are known to this fake');
      const style = Number(button.style);
      if (!(style >= 1 && style <= 5)) throw invalid('a button style is 1 to 5');
      if (typeof button.label !== 'string' || button.label.length > 80) throw invalid('a label of 80 at most');
      if (style === 5) {
        if (typeof button.url !== 'string' || button.custom_id !== undefined) throw invalid('a link button has a url');
        continue;
      }
      const id = button.custom_id;
      if (typeof id !== 'string' || id.length === 0 || id.length > 100) throw invalid('custom_id of 1 to 100');
      if (ids.has(id)) throw invalid('custom_id must be unique in the message');
      ids.add(id);
    }
  }
  return raw as FakeComponentRow[];
}

function guildIdOf(context: RestContext, message: FakeMessage): { guild_id?: string } {
  const channel = context.world.channels.get(message.channelId);
  return channel?.type === ChannelType.DM ? {} : { guild_id: context.world.guildId };
}

/** Bot ids that receive a message's events: every bot for a guild channel, the DM's bot for a DM. */
export function visibleBots(context: RestContext, message: FakeMessage): string[] {
  const channel = context.world.channels.get(message.channelId);
  return context.world.bots.filter((bot) => channel && context.world.canSee(bot, channel)).map((bot) => bot.id);
}

function postMessage(context: RestContext, bot: FakeBot, channelId: string, body: unknown, response: ServerResponse) {
  const { world } = context;
  const input = (body ?? {}) as {
    content?: unknown;
    nonce?: unknown;
    enforce_nonce?: unknown;
    message_reference?: { message_id?: string };
    allowed_mentions?: AllowedMentions;
    files?: UploadedFile[];
    components?: unknown;
  };
  const content = typeof input.content === 'string' ? input.content : '';
  const files = input.files ?? [];
  const components = componentsOf(input.components);
  if (content.trim() === '' && files.length === 0 && !components?.length) {
    throw new HttpError(400, 50006, 'Cannot send an empty message');
  }
  if (files.length > 0 && context.refuseAttachments) throw new HttpError(403, 50013, 'Missing Permissions');
  const refusals = context.refusedPosts.get(channelId) ?? 0;
  if (refusals > 0) {
    context.refusedPosts.set(channelId, refusals - 1);
    throw new HttpError(403, 50013, 'Missing Permissions');
  }
  if (content.length > 2000) throw new HttpError(400, 50035, 'Invalid Form Body: content must be 2000 or fewer');
  const nonce = typeof input.nonce === 'string' || typeof input.nonce === 'number' ? String(input.nonce) : null;
  if (nonce && nonce.length > 25) throw new HttpError(400, 50035, 'Invalid Form Body: nonce over 25 characters');
  if (nonce && input.enforce_nonce === true) {
    const seen = world.nonces.get(`${bot.id}:${nonce}`);
    const earlier = seen && Date.now() - seen.at < NONCE_TTL_MS ? world.message(seen.messageId) : undefined;
    if (earlier) return send(response, 200, messageJson(world, earlier, { gateway: false }));
  }
  const message = world.createMessage({
    channelId,
    authorId: bot.id,
    content,
    nonce,
    replyTo: input.message_reference?.message_id ?? null,
    ...(input.allowed_mentions ? { allowedMentions: input.allowed_mentions } : {}),
    ...(files.length > 0 ? { attachments: files } : {}),
    ...(components ? { components } : {}),
  });
  if (nonce) world.nonces.set(`${bot.id}:${nonce}`, { messageId: message.id, at: Date.now() });
  context.publish(message);
  if (context.lostResponses > 0) {
    context.lostResponses -= 1;
    return send(response, 502, { code: 0, message: '502: Bad Gateway' });
  }
  send(response, 200, messageJson(world, message, { gateway: false }));
}

function interactionCallback(context: RestContext, token: string, body: unknown, response: ServerResponse): void {
  const pending = context.interactions.get(token);
  if (!pending) throw new HttpError(404, 10062, 'Unknown interaction');
  const input = (body ?? {}) as { type?: number; data?: { content?: string; flags?: number } };
  if (input.type === 5) {
    pending.deferredFlags = input.data?.flags ?? 0;
  } else if (input.type === 4) {
    context.interactions.delete(token);
    pending.resolve({
      content: input.data?.content ?? '',
      ephemeral: ((input.data?.flags ?? 0) & 64) === 64,
      deferred: false,
    });
  } else {
    throw new HttpError(400, 50035, `fake: unsupported interaction response type ${String(input.type)}`);
  }
  send(response, 204);
}

/** A follow-up to an interaction already answered; Discord keeps the token valid for 15 minutes. */
function sendFollowUp(context: RestContext, app: string, token: string, body: unknown, response: ServerResponse): void {
  const input = (body ?? {}) as { content?: string; flags?: number };
  const content = input.content ?? '';
  if (content.length > 2000)
    throw new HttpError(400, 50035, 'Invalid Form Body: content: Must be 2000 or fewer in length.');
  context.followUps.push({ token, content, ephemeral: ((input.flags ?? 0) & 64) === 64 });
  send(response, 200, {
    id: context.world.ids.next(),
    type: 0,
    channel_id: '0',
    content,
    author: { id: app, username: 'app', discriminator: '0', bot: true },
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    flags: input.flags ?? 0,
    components: [],
  });
}

function editOriginal(context: RestContext, token: string, body: unknown, response: ServerResponse): void {
  const pending = context.interactions.get(token);
  if (!pending || pending.deferredFlags === null) throw new HttpError(404, 10008, 'Unknown Message');
  context.interactions.delete(token);
  const content = (body as { content?: string })?.content ?? '';
  pending.resolve({ content, ephemeral: (pending.deferredFlags & 64) === 64, deferred: true });
  send(response, 200, {
    id: context.world.ids.next(),
    type: 20,
    channel_id: '0',
    content,
    author: { id: pending.applicationId, username: 'app', discriminator: '0', bot: true },
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    flags: pending.deferredFlags,
    components: [],
  });
}
