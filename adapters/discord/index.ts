import type { ChatAdapter } from '../../src/ports.js';
import { DiscordAdapter, type DiscordAdapterOptions } from './discord-adapter.js';

export {
  controlAgentOf,
  DISCORD_MESSAGE_LIMIT,
  DiscordAdapter,
  type DiscordAdapterOptions,
} from './discord-adapter.js';

/** The Discord adapter for every agent that has a Discord token (main.ts calls this). */
export function createDiscordAdapter(options: DiscordAdapterOptions): ChatAdapter {
  return new DiscordAdapter(options);
}
export { checkDiscordTokens } from './token-check.js';
