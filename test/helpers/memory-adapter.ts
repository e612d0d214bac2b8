import type { AdapterSink, ChatAdapter, CommandEvent, Outbound, Posted, StreamingPost } from '../../src/ports.js';

/**
 * An in-memory platform for bridge tests: humans "say" things, posts are recorded, and (like
 * Discord and Slack) every post is echoed back as an incoming message from that agent's bot.
 */
export class MemoryAdapter implements ChatAdapter {
  readonly platform: string;
  readonly posts: Array<Outbound & { id: string }> = [];
  sink: AdapterSink | undefined;
  /** Echo each agent post back through `receive`, as platforms do. */
  echo = true;
  /** Posts longer than this are split into several platform messages. */
  chunkSize = 2000;
  /** Make the next posts fail (platform down). */
  failPosts = 0;
  private next = 1;

  constructor(platform = 'test') {
    this.platform = platform;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
  }

  async stop(): Promise<void> {}

  async post(message: Outbound): Promise<Posted> {
    if (this.failPosts > 0) {
      this.failPosts--;
      throw new Error('platform unavailable');
    }
    // Like Discord, a long text is posted as several messages (one id each).
    const ids = Array.from(
      { length: Math.max(1, Math.ceil(message.text.length / this.chunkSize)) },
      () => `p${this.next++}`,
    );
    const id = ids[0] ?? '';
    this.posts.push({ ...message, id });
    if (this.echo && message.agent) {
      const sink = this.sink;
      const agent = message.agent;
      // The echo arrives while the bridge may still be recording the post.
      queueMicrotask(() => {
        for (const [index, chunkId] of ids.entries()) {
          void sink?.receive({
            platform: this.platform,
            channel: message.channel,
            messageId: chunkId,
            author: { id: `bot-${agent}`, name: agent, kind: 'agent' },
            text: message.text.slice(index * this.chunkSize, (index + 1) * this.chunkSize),
          });
        }
      });
    }
    return { messageIds: ids };
  }

  /**
   * Stream replies by edits (like DISCORD_STREAM=edit); every update, finish and cancel is recorded.
   * Like the real adapters, `stream` exists only while streaming is on.
   */
  set streaming(on: boolean) {
    if (on) this.stream = (channel, agent) => this.startStream(channel, agent);
    else delete this.stream;
  }
  stream?: (channel: string, agent: string) => StreamingPost | undefined;
  readonly streams: Array<{
    channel: string;
    agent: string;
    updates: string[];
    finished?: string;
    cancelled: boolean;
  }> = [];
  private startStream(channel: string, agent: string): StreamingPost {
    const record: (typeof this.streams)[number] = { channel, agent, updates: [], cancelled: false };
    this.streams.push(record);
    return {
      update: (text) => {
        record.updates.push(text);
      },
      finish: async (text) => {
        record.finished = text;
        return this.post({ channel, agent, text });
      },
      cancel: async () => {
        record.cancelled = true;
      },
    };
  }

  /** DMs: the room between an agent's bot and a human is `dm-<agent>-<user>`; `unreachable` users have none. */
  unreachable = new Set<string>();
  async openDirect(agent: string, user: string): Promise<string | undefined> {
    return this.unreachable.has(user) ? undefined : `dm-${agent}-${user}`;
  }

  /** `#name` resolves to the room `name`. */
  async resolveChannel(reference: string): Promise<string | undefined> {
    return reference.startsWith('#') ? reference.slice(1) : undefined;
  }

  /** A human writes in a room. */
  async say(text: string, options: { channel?: string; user?: string; id?: string; direct?: string } = {}) {
    const user = options.user ?? 'user';
    await this.sink?.receive({
      platform: this.platform,
      channel: options.channel ?? 'room',
      messageId: options.id ?? `h${this.next++}`,
      author: { id: `u-${user}`, name: user, kind: 'human' },
      text,
      ...(options.direct ? { direct: { agent: options.direct } } : {}),
    });
  }

  async command(name: CommandEvent['name'], args = '', options: { channel?: string; operator?: boolean } = {}) {
    return (
      (await this.sink?.command({
        platform: this.platform,
        channel: options.channel ?? 'room',
        name,
        args,
        user: { id: 'op', name: 'op' },
        isOperator: options.operator ?? true,
      })) ?? ''
    );
  }

  /** `[@name]: text` lines of what was posted in a room, system posts as `[system]: text`. */
  transcript(channel = 'room'): string[] {
    return this.posts
      .filter((p) => p.channel === channel)
      .map((p) => (p.agent ? `[@${p.agent}]: ${p.text}` : `[system]: ${p.text}`));
  }
}
