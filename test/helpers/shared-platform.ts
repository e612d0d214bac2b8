import { AdapterError } from '../../src/errors.js';
import type {
  AdapterSink,
  ChatAdapter,
  CommandEvent,
  Outbound,
  Posted,
  PostOptions,
  Receipt,
} from '../../src/ports.js';

/**
 * One platform every replica is connected to: each message and each post's echo reaches every replica, and a post
 * sent again under the same outbox key is the post already made (as Discord's nonce makes it).
 */
export class SharedPlatform {
  readonly posts: Array<Outbound & { id: string; by: string }> = [];
  /** What each replica's bridge said became of each message it received (by message id), as an adapter hears it. */
  readonly receipts = new Map<string, Receipt | undefined>();
  /** Replicas whose posts the platform refuses for now, for a reason that passes (a 503). */
  readonly refusing = new Set<string>();
  /** Commands answered through the route they came with (`answerCommand`): by which replica, the route, the text. */
  readonly replies: Array<{ by: string; reply: string; text: string }> = [];
  /** How many times each replica tried to post. */
  readonly tries = new Map<string, number>();
  private readonly sinks = new Map<string, AdapterSink>();
  private next = 1;
  private readonly keys = new Map<string, string>();

  adapter(replica: string): ChatAdapter {
    return {
      platform: 'shared',
      start: async (sink) => {
        this.sinks.set(replica, sink);
      },
      stop: async () => {
        this.sinks.delete(replica);
      },
      answerCommand: async (reply: string, text: string) => {
        this.replies.push({ by: replica, reply, text });
      },
      post: async (message: Outbound, options?: PostOptions): Promise<Posted> => {
        this.tries.set(replica, (this.tries.get(replica) ?? 0) + 1);
        if (this.refusing.has(replica)) {
          throw new AdapterError('shared', 'the platform is unavailable (503)', { retryable: true });
        }
        // Like Discord's nonce: a post sent again under its outbox key (a room taken up mid-post) is the same post.
        const again = options?.key ? this.keys.get(options.key) : undefined;
        if (again) return { messageIds: [again] };
        const id = `p${this.next++}`;
        if (options?.key) this.keys.set(options.key, id);
        this.posts.push({ ...message, id, by: replica });
        const agent = message.agent;
        if (agent) {
          queueMicrotask(() =>
            this.deliver(id, message.channel, { id: `bot-${agent}`, name: agent, kind: 'agent' }, message.text),
          );
        }
        return { messageIds: [id] };
      },
    };
  }

  /**
   * A human says something in a channel; every connected replica receives it (or only `to`, as Slack does).
   * `missed`: it reaches `to` as a catch-up's read does (a message said while that replica was away).
   */
  say(channel: string, text: string, to?: string, options: { missed?: boolean } = {}): string {
    const id = `h${this.next++}`;
    this.deliver(id, channel, { id: 'u1', name: 'alice', kind: 'human' }, text, to, options.missed === true);
    return id;
  }

  /** An operator command, as one replica's adapter receives it; resolves with the answer (none: another answers). */
  async command(replica: string, event: CommandEvent): Promise<string | undefined> {
    const sink = this.sinks.get(replica);
    if (!sink) throw new Error(`replica ${replica} is not connected`);
    return sink.command(event);
  }

  /** A replica's catch-up of a channel is done, up to message `id` (as an adapter reports it). */
  caughtUp(replica: string, channel: string, id: string): void {
    this.sinks.get(replica)?.caughtUp?.('shared', channel, id);
  }

  /** A replica cut off from the platform: it receives nothing more. */
  detach(replica: string): void {
    this.sinks.delete(replica);
  }

  private deliver(
    id: string,
    channel: string,
    author: { id: string; name: string; kind: 'human' | 'agent' },
    text: string,
    to?: string,
    missed = false,
  ) {
    for (const [replica, sink] of this.sinks) {
      if (to !== undefined && replica !== to) continue;
      const event = { platform: 'shared', channel, messageId: id, author, text, ...(missed ? { missed } : {}) };
      void sink.receive(event).then((receipt) => {
        this.receipts.set(`${replica}:${id}`, receipt ?? undefined);
      });
    }
  }

  /** The answers of agent `data` in a channel, in order. */
  answers(channel: string): string[] {
    return this.posts.filter((p) => p.channel === channel && p.agent === 'data').map((p) => p.text);
  }
}
