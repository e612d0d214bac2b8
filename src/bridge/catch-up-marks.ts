import type { AdapterSink } from '../ports.js';
import type { Store } from '../store/index.js';

/**
 * What the sink tells adapters about catching up: where each room's catch-up starts — the mark the adapter last
 * recorded (`caughtUp`), else the newest platform id stored before this start (never one stored since: a live
 * message arriving right after the connection must not hide what was missed) — and which rooms the store knows.
 * A recorded mark also ends the room's backlog: what the catch-up fetched is answered, once (`resume`).
 */
export function catchUpMarks(
  store: Store,
  resume: (roomKey: string) => void,
): Pick<AdapterSink, 'lastMessageId' | 'caughtUp' | 'rooms' | 'directRooms'> {
  const startMarks = new Map(
    store.channels().map((c) => [`${c.platform}:${c.channel}`, store.lastPlatformMessageId(c.platform, c.channel)]),
  );
  return {
    lastMessageId: (platform, channel) => {
      const key = `${platform}:${channel}`;
      return (
        store.caughtUp(platform, channel) ??
        (startMarks.has(key) ? startMarks.get(key) : store.lastPlatformMessageId(platform, channel))
      );
    },
    caughtUp: (platform, channel, id) => {
      store.setCaughtUp(platform, channel, id);
      resume(`${platform}:${channel}`);
    },
    rooms: (platform) => store.activeRooms(platform),
    directRooms: (platform) =>
      store
        .channels()
        .filter((c) => c.platform === platform && c.directAgent)
        .map((c) => ({ channel: c.channel, agent: c.directAgent ?? '' })),
  };
}
