import { createHash } from 'node:crypto';
import type { Config } from '../../config/index.js';
import type { RoomSetup } from '../../room/state.js';
import type { RoomRecord } from '../../store/port.js';
import { PRIVATE_PLATFORM, privatePair } from '../executors/private-rooms.js';

/** The room's fixed facts from the configuration. */
export function roomSetup(config: Config, record: RoomRecord): RoomSetup {
  const { settings, agents } = config;
  const pair = record.platform === PRIVATE_PLATFORM ? privatePair(agents, record.platform, record.channel) : undefined;
  const batching = settings.BATCHING === 'on';
  return {
    key: record.key,
    agents: agents.map((a) => ({
      name: a.name,
      activation: a.activation,
      // Who may share a batched call: the same endpoint, model and key (kept as a digest, never the key itself).
      ...(batching
        ? {
            batchGroup: createHash('sha256')
              .update(`${a.endpoint}\n${a.model}\n${a.apiKey ?? ''}`)
              .digest('hex'),
          }
        : {}),
    })),
    turnLimit: settings.TURN_LIMIT,
    kind: pair ? 'pair' : record.directAgent ? 'direct' : 'room',
    ...(record.directAgent ? { directAgent: record.directAgent } : {}),
    ...(pair ? { pair: [pair[0].name, pair[1].name] as const } : {}),
    privacy: settings.PRIVACY_ROOMS.includes(record.key) ? 'mentions' : settings.PRIVACY,
    requestTimeoutMs: settings.REPLY_TIMEOUT_S * 1000,
    editWindowMs: settings.EDIT_WAKE_MINUTES * 60_000,
    maxToolRounds: settings.MAX_TOOL_ROUNDS,
    batching,
    approvalTimeoutMs: settings.APPROVAL_TIMEOUT_S * 1000,
    chatRequestTimeoutMs: settings.CHAT_REQUEST_TIMEOUT_S * 1000,
  };
}
