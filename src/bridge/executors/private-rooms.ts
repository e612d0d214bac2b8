import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../../config/index.js';
import type { Logger } from '../../log.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted, PostOptions } from '../../ports.js';

/** Private agent-to-agent chats live in rooms of this pseudo-platform; nothing is posted anywhere. */
export const PRIVATE_PLATFORM = 'private';

/** The private chats' "platform": messages are stored, shown to no one but the two agents and operators. */
export class PrivateRooms implements ChatAdapter {
  readonly platform = PRIVATE_PLATFORM;
  /** @param mirror shows each private message to operators (PRIVATE_CHAT_LOG), if configured. */
  constructor(private readonly mirror: (message: Outbound) => Promise<void> = async () => {}) {}
  async start(_sink: AdapterSink): Promise<void> {}
  async stop(): Promise<void> {}
  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    // A post sent again after a restart keeps its id: it is found as already stored.
    if (options.resendSince === undefined) await this.mirror(message);
    return { messageIds: [`private-${options.key ?? randomUUID()}`] };
  }
}

/**
 * Shows a private agent chat message in the operators' log room (PRIVATE_CHAT_LOG, `platform:channel`), outside its
 * history; nothing when none is set.
 */
export function chatLog(
  logRoom: string | undefined,
  adapters: ReadonlyMap<string, ChatAdapter>,
  log: Logger,
): (message: Outbound) => Promise<void> {
  const at = logRoom ? logRoom.indexOf(':') : -1;
  return async (message) => {
    if (!logRoom || at < 0) return;
    const adapter = adapters.get(logRoom.slice(0, at));
    if (!adapter || adapter.platform === PRIVATE_PLATFORM) return;
    const pair = message.channel.replace('+', ' <-> ');
    const text = `[private chat ${pair}] ${message.agent ? `@${message.agent}` : 'system'}: ${message.text}`;
    await adapter.post({ channel: logRoom.slice(at + 1), agent: null, text }).catch((error: unknown) => {
      log.warn({ err: error, room: logRoom }, 'mirroring a private chat message failed');
    });
  };
}

/** The two agents of a private room (`private:a+b`), in configured spelling. */
export function privatePair(
  agents: readonly AgentConfig[],
  platform: string,
  channel: string,
): [AgentConfig, AgentConfig] | undefined {
  if (platform !== PRIVATE_PLATFORM) return undefined;
  const find = (name: string) => agents.find((a) => a.name.toLowerCase() === name.toLowerCase());
  const [a, b] = channel.split('+').map(find);
  return a && b ? [a, b] : undefined;
}
