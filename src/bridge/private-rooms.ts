import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../config/index.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted } from '../ports.js';

/** Private agent-to-agent chats live in rooms of this pseudo-platform; nothing is posted anywhere. */
export const PRIVATE_PLATFORM = 'private';

/** The private chats' "platform": messages are stored, shown to no one but the two agents and operators. */
export class PrivateRooms implements ChatAdapter {
  readonly platform = PRIVATE_PLATFORM;
  /** @param mirror shows each private message to operators (PRIVATE_CHAT_LOG), if configured. */
  constructor(private readonly mirror: (message: Outbound) => Promise<void> = async () => {}) {}
  async start(_sink: AdapterSink): Promise<void> {}
  async stop(): Promise<void> {}
  async post(message: Outbound): Promise<Posted> {
    await this.mirror(message);
    return { messageIds: [`private-${randomUUID()}`] };
  }
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
