/**
 * The real Discord adapter as the generated conversations drive it: everything passes through, and what the bridge
 * and the adapter do between them is counted (posts, messages taken in, commands under way), so a step can tell when
 * it has settled. A catch-up the script has not yet called done is held here (the script decides when a catch-up
 * ends); every other one goes through, and is awaited until the bridge has stored its mark.
 */
import type {
  AdapterSink,
  ChatAdapter,
  CommandEvent,
  Inbound,
  Outbound,
  Posted,
  PostOptions,
} from '../../../src/ports.js';

export interface Watch {
  /** The agent of each post by its idempotency key (null: a line of the bridge's own). */
  readonly keys: Map<string, string | null>;
  /** Platform ids of the messages (and edits) the bridge has taken in. */
  readonly received: Set<string>;
  /** Rooms (channel ids) whose catch-up the script has not called done: their `caughtUp` waits here. */
  readonly holding: Set<string>;
  /** Whose model client comes next: the room an agent is shown typing in. */
  readonly typing: (room: string, agent: string) => void;
}

export class WatchedAdapter implements ChatAdapter {
  readonly platform: string;
  readonly openDirect?: NonNullable<ChatAdapter['openDirect']>;
  readonly resolveChannel?: NonNullable<ChatAdapter['resolveChannel']>;
  readonly connected?: NonNullable<ChatAdapter['connected']>;
  posting = 0;
  receiving = 0;
  commanding = 0;
  /** Messages taken in and commands answered so far. */
  taken = 0;
  answered = 0;
  /** Posts the platform refused. */
  refused = 0;
  /** Every post asked of the platform, in order. */
  readonly posts: Outbound[] = [];
  /** The catch-ups held for the script, by channel. */
  readonly deferred = new Map<string, { platform: string; id: string }>();
  /** Catch-ups passed on, by room key, until the bridge stores their mark. */
  readonly passed = new Map<string, string>();
  private sink: AdapterSink | undefined;
  private stopping = false;

  constructor(
    readonly inner: ChatAdapter,
    private readonly watch: Watch,
  ) {
    this.platform = inner.platform;
    if (inner.openDirect)
      this.openDirect = (agent, user) => inner.openDirect?.(agent, user) ?? Promise.resolve(undefined);
    if (inner.resolveChannel) this.resolveChannel = (ref) => inner.resolveChannel?.(ref) ?? Promise.resolve(undefined);
    if (inner.connected) this.connected = () => inner.connected?.() ?? true;
  }

  start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    return this.inner.start({
      ...sink,
      receive: async (event: Inbound) => {
        this.receiving += 1;
        try {
          await sink.receive(event);
          this.watch.received.add(event.messageId);
          this.taken += 1;
        } finally {
          this.receiving -= 1;
        }
      },
      command: async (event: CommandEvent) => {
        this.commanding += 1;
        try {
          return await sink.command(event);
        } finally {
          this.answered += 1;
          this.commanding -= 1;
        }
      },
      caughtUp: (platform, channel, id) => {
        if (this.stopping) return sink.caughtUp?.(platform, channel, id);
        if (this.watch.holding.has(channel)) {
          this.deferred.set(channel, { platform, id });
          return;
        }
        this.passed.set(`${platform}:${channel}`, id);
        sink.caughtUp?.(platform, channel, id);
      },
    });
  }

  /** The script calls a room's catch-up done: the held `caughtUp` goes to the bridge. */
  release(channel: string): void {
    const held = this.deferred.get(channel);
    this.deferred.delete(channel);
    this.watch.holding.delete(channel);
    if (!held || !this.sink) return;
    this.passed.set(`${held.platform}:${channel}`, held.id);
    this.sink.caughtUp?.(held.platform, channel, held.id);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.inner.stop();
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    if (options.key !== undefined) this.watch.keys.set(options.key, message.agent);
    this.posts.push(message);
    this.posting += 1;
    try {
      return await this.inner.post(message, options);
    } catch (error) {
      this.refused += 1;
      throw error;
    } finally {
      this.posting -= 1;
    }
  }

  typing(channel: string, agent: string): Promise<void> {
    this.watch.typing(`${this.platform}:${channel}`, agent);
    return this.inner.typing?.(channel, agent) ?? Promise.resolve();
  }

  toolRun(channel: string, agent: string, command: string, output: string): void {
    this.inner.toolRun?.(channel, agent, command, output);
  }
}
