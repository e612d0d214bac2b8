/**
 * Which of a room's messages come from foreign bots: bots the platform's allow list lets talk to the agents
 * (DISCORD_ALLOWED_BOTS, SLACK_ALLOWED_BOTS) that are not our agents. The room stores them as a person's messages
 * (they wake agents as a person does, with no agent's rights); an agent's context shows them as data.
 */
import type { Settings } from '../config/index.js';
import type { IsForeignBot } from './render-message.js';

/** A Slack bot's id (`B…`): the author id of every bot message the Slack adapter lets in. */
const SLACK_BOT_ID = /^B[A-Z0-9]{2,}$/;

/** For the room `roomKey` (`platform:channel`); undefined where the platform lets no bot in (web, terminal). */
export function foreignBotsIn(
  roomKey: string,
  settings: Partial<Pick<Settings, 'DISCORD_ALLOWED_BOTS' | 'SLACK_ALLOWED_BOTS'>>,
): IsForeignBot | undefined {
  const platform = roomKey.slice(0, roomKey.indexOf(':'));
  if (platform === 'discord') {
    const allowed = new Set(settings.DISCORD_ALLOWED_BOTS ?? []);
    return allowed.size === 0 ? undefined : (message) => allowed.has(message.authorId);
  }
  if (platform === 'slack') {
    const allowed = new Set((settings.SLACK_ALLOWED_BOTS ?? []).map((bot) => bot.toLowerCase()));
    return (message) => SLACK_BOT_ID.test(message.authorId) || allowed.has(message.authorId.toLowerCase());
  }
  return undefined;
}
