import type { IncomingMessage, ServerResponse } from 'node:http';
import { HTTPReceiver, type SlashCommand, SocketModeReceiver, webApi } from '@slack/bolt';
import { AdapterError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { download } from '../shared/download.js';
import { boltLogger } from './bolt-logger.js';
import { CARD_ACTION, type CardClick } from './buttons.js';
import type { SlackMessageEvent } from './inbound.js';
import { COMMANDS } from './manifest.js';
import { StoredAckApp, verdictOf } from './stored-ack.js';
import { webClientOptions, withRateLimitRetry } from './web-call.js';

export interface IdentityHandlers {
  /**
   * A message or app_mention reached this identity. Resolves true once it may be acknowledged (the bridge has it,
   * or ignores it); false leaves it unacknowledged, so Slack sends it again.
   */
  message(identity: SlackIdentity, event: SlackMessageEvent, teamId: string | undefined): Promise<boolean>;
  /** A slash command reached this identity (the control app); answer through `respond`. */
  command(identity: SlackIdentity, command: SlashCommand, respond: (text: string) => Promise<void>): Promise<void>;
  /** A click on a button of a card this identity posted; answer the clicker alone through `respond`. */
  click(identity: SlackIdentity, click: CardClick, respond: (text: string) => Promise<void>): Promise<void>;
  /** The Socket Mode connection dropped (events may be missed until a catch-up). */
  disconnected?(): void;
  /** The Socket Mode connection is back after a drop. */
  reconnected?(): void;
}

export interface IdentityOptions {
  readonly agent: string;
  readonly botToken: string;
  readonly appToken: string | undefined;
  readonly signingSecret: string | undefined;
  readonly control: boolean;
  readonly apiUrl: string | undefined;
  readonly logger: Logger;
}

/** Where Slack serves the files shared in a workspace. */
const FILE_HOST = 'https://files.slack.com';

/** The slash commands the control app answers: exactly those its manifest registers. */
const OPERATOR_COMMAND = new RegExp(`^(?:${COMMANDS.map((c) => c.command).join('|')})$`);

/** `/pass, /reset, /status or /privacy` */
const COMMAND_LIST = COMMANDS.map((c) => c.command)
  .join(', ')
  .replace(/, ([^,]*)$/, ' or $1');

/**
 * What to acknowledge an envelope with that this app has no listener for (interactive payloads such as block
 * actions and shortcuts, slash commands other than the operator commands on the control app), or undefined when a
 * listener handles it. Unacknowledged, Slack would deliver it again and show the user `dispatch_failed`.
 * Events need nothing here: message events are acknowledged once the bridge has them (stored-ack.ts), others as
 * Bolt does, before its listeners run.
 */
export function unhandledReply(body: unknown, control: boolean): string | undefined {
  const { type, command, actions } = (body ?? {}) as { type?: unknown; command?: unknown; actions?: unknown };
  if (type === 'event_callback') return undefined;
  // A card's button: every app posts cards (a DM's card is the DM's app's), so every app listens for their clicks.
  const action = Array.isArray(actions) ? (actions[0] as { action_id?: unknown } | undefined) : undefined;
  if (type === 'block_actions' && typeof action?.action_id === 'string' && CARD_ACTION.test(action.action_id)) {
    return undefined;
  }
  if (typeof command === 'string') {
    if (control && OPERATOR_COMMAND.test(command)) return undefined;
    // An empty acknowledgement would leave the user wondering; say so, privately.
    return control
      ? `${command} is not a Roundtable command here: use ${COMMAND_LIST}.`
      : `${command} is not handled by this app: the operator commands belong to the control agent's app.`;
  }
  return '';
}

/** Where an HTTP-mode app receives its events on the shared server. */
export function eventsPath(agent: string): string {
  return `/slack/events/${encodeURIComponent(agent)}`;
}

/**
 * One agent's Slack app: its Web API client and its Bolt `App`, over Socket Mode
 * (app token) or HTTP (signing secret, behind the adapter's shared server).
 */
export class SlackIdentity {
  readonly agent: string;
  readonly control: boolean;
  readonly mode: 'socket' | 'http';
  readonly client: webApi.WebClient;
  botUserId = '';
  botId = '';
  teamId = '';
  private readonly options: IdentityOptions;
  private readonly log: Logger;
  private socket: SocketModeReceiver | undefined;
  private http: HTTPReceiver | undefined;
  /** Socket Mode: whether the WebSocket is open now (Slack said hello, no disconnect since). */
  private socketUp = false;

  constructor(options: IdentityOptions) {
    this.options = options;
    this.agent = options.agent;
    this.control = options.control;
    this.mode = options.appToken ? 'socket' : 'http';
    this.log = options.logger.child({ slackApp: options.agent });
    this.client = new webApi.WebClient(options.botToken, {
      ...webClientOptions(options.apiUrl),
      logger: boltLogger(this.log),
    });
  }

  /** Asks Slack who this bot is (its user id, bot id and team); a bad token fails here, naming the agent. */
  async authenticate(): Promise<void> {
    let result: Awaited<ReturnType<webApi.WebClient['auth']['test']>>;
    try {
      result = await withRateLimitRetry(() => this.client.auth.test());
    } catch (error) {
      throw new AdapterError('slack', `agent ${this.agent}: auth.test failed: ${describeError(error)}`, {
        cause: error,
      });
    }
    if (!result.user_id || !result.bot_id) {
      throw new AdapterError('slack', `agent ${this.agent}: the token is not a bot token (auth.test gave no bot id)`);
    }
    this.botUserId = result.user_id;
    this.botId = result.bot_id;
    this.teamId = result.team_id ?? '';
  }

  /** Builds the Bolt app and its receiver and wires the listeners. Call after `authenticate`. */
  build(handlers: IdentityHandlers): void {
    const logger = boltLogger(this.log);
    const clientOptions = { ...webClientOptions(this.options.apiUrl), logger };
    let receiver: SocketModeReceiver | HTTPReceiver;
    if (this.options.appToken) {
      this.socket = new SocketModeReceiver({
        appToken: this.options.appToken,
        logger,
        autoReconnectEnabled: true,
        // apps.connections.open goes to the same Web API base; reconnects may retry it (it creates nothing).
        installerOptions: {
          clientOptions: { slackApiUrl: clientOptions.slackApiUrl, retryConfig: { retries: 10, factor: 1.6 } },
        },
      });
      receiver = this.socket;
      const client = this.socket.client;
      let opened = false;
      client.on('connected', () => {
        this.socketUp = true;
        if (opened) handlers.reconnected?.();
        opened = true;
      });
      // The socket closing is the drop (the client says `reconnecting` only once it tries again, seconds later).
      for (const dropped of ['close', 'reconnecting'] as const) client.on(dropped, () => handlers.disconnected?.());
      for (const down of ['close', 'disconnected', 'reconnecting', 'disconnecting'] as const) {
        client.on(down, () => {
          this.socketUp = false;
        });
      }
    } else {
      this.http = new HTTPReceiver({
        signingSecret: this.options.signingSecret ?? '',
        endpoints: [eventsPath(this.agent)],
        logger,
        // Commands and interactions are answered at once; a message event's ack waits for the store (stored-ack.ts).
        processBeforeResponse: false,
        unhandledRequestHandler: ({ response }) => {
          this.log.warn('a Slack event was not stored within 3 s: answered 503, so Slack sends it again');
          if (!response.headersSent) response.writeHead(503).end();
        },
      });
      receiver = this.http;
    }
    const app = new StoredAckApp({
      token: this.options.botToken,
      // Known from auth.test already: Bolt's self-filter and mention matching use them, no second call.
      botId: this.botId,
      botUserId: this.botUserId,
      receiver,
      logger,
      clientOptions,
    });
    // First in line: whatever this app has no listener for is acknowledged at once.
    app.use(async (args) => {
      const reply = unhandledReply(args.body, this.control);
      const ack = (args as { ack?: (response?: string) => Promise<void> }).ack;
      if (reply === undefined || !ack) return args.next();
      await ack(reply || undefined);
    });
    for (const type of ['message', 'app_mention'] as const) {
      app.event(type, async ({ event, body, context }) => {
        const verdict = verdictOf(context);
        const acknowledge = await handlers.message(this, event as unknown as SlackMessageEvent, body.team_id);
        if (verdict) verdict.acknowledge = acknowledge;
      });
    }
    app.action({ type: 'block_actions', action_id: CARD_ACTION }, async ({ ack, body, respond }) => {
      // Ack first (Slack shows an error after 3 s); the answer follows through the response_url, to the clicker only.
      await ack();
      await handlers.click(this, body as CardClick, async (text) => {
        await respond({ response_type: 'ephemeral', replace_original: false, text });
      });
    });
    if (this.control) {
      app.command(OPERATOR_COMMAND, async ({ command, ack, respond }) => {
        // Ack first: Slack shows an error if the answer takes over 3 s; the real answer follows via response_url.
        await ack();
        await handlers.command(this, command, async (text) => {
          await respond({ response_type: 'ephemeral', text });
        });
      });
    }
    app.error(async (error) => {
      this.log.error({ err: error }, 'slack event handling failed');
    });
  }

  /** Socket Mode: the connection is open; HTTP mode: always (the adapter's server answers for it). */
  get connected(): boolean {
    return this.mode === 'http' || this.socketUp;
  }

  /** Opens the Socket Mode connection (HTTP-mode apps are served by the adapter's server). */
  async start(): Promise<void> {
    if (!this.socket) return;
    try {
      await this.socket.client.start();
    } catch (error) {
      throw new AdapterError('slack', `agent ${this.agent}: Socket Mode connection failed: ${describeError(error)}`, {
        cause: error,
      });
    }
  }

  async stop(): Promise<void> {
    if (this.socket) await this.socket.client.disconnect();
  }

  /**
   * Downloads a file Slack shared with this app (`url_private_download`), with this app's token and from Slack's
   * file host only (files.slack.com, or the host of SLACK_API_URL).
   */
  async downloadFile(
    url: string,
    options: { maxBytes: number; mimeType?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<Uint8Array> {
    const origins = new Set([FILE_HOST, ...(this.options.apiUrl ? [new URL(this.options.apiUrl).origin] : [])]);
    return download(url, {
      origins,
      headers: { authorization: `Bearer ${this.options.botToken}` },
      maxBytes: options.maxBytes,
      signal: options.signal,
      // Without the files:read scope Slack answers 200 with its sign-in page instead of the file.
      check: (response) =>
        response.headers.get('content-type')?.startsWith('text/html') && !options.mimeType?.startsWith('text/html')
          ? `Slack sent a sign-in page instead of the file: @${this.agent}'s app needs the files:read scope (add it, then reinstall the app)`
          : undefined,
    });
  }

  /** Serves one HTTP request addressed to this app (signature checked by Bolt: 401 when bad or stale). */
  handleHttp(req: IncomingMessage, res: ServerResponse): void {
    if (!this.http) {
      res.writeHead(404).end();
      return;
    }
    this.http.requestListener(req, res);
  }
}
