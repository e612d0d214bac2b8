/** A room's fixed facts for tests of `decide`: one `mention` agent in an ordinary room, unless the patch says more. */
import type { RoomSetup } from '../../src/room/state.js';

export function roomSetup(patch: Partial<RoomSetup> = {}): RoomSetup {
  return {
    key: 'test:room',
    agents: [{ name: 'pm', activation: 'mention' }],
    turnLimit: 20,
    kind: 'room',
    privacy: 'off',
    requestTimeoutMs: 600_000,
    editWindowMs: 120_000,
    maxToolRounds: 8,
    batching: false,
    ...patch,
  };
}
