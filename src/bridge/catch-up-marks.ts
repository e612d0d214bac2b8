import type { Logger } from '../log.js';
import type { AdapterSink } from '../ports.js';
import type { Store } from '../store/index.js';

/**
 * What the sink tells adapters about catching up: where each room's catch-up starts — the mark the adapter last
 * recorded (`caughtUp`), else the newest platform id stored before this start (never one stored since: a live
 * message arriving right after the connection must not hide what was missed) — and which rooms the store knows.
 * A recorded mark also ends the room's backlog: what the catch-up fetched is answered, once (`resume`).
 * A mark the store cannot write is logged: the adapter writes it on its way to hand over a message, which must
 * still arrive (and be told about, if it cannot be stored either).
 */
export function catchUpMarks(
  store: Store,
  resume: (roomKey: string) => void,
  log: Logger,
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
      try {
        store.setCaughtUp(platform, channel, id);
      } catch (error) {
        log.error({ err: error, platform, channel }, 'the catch-up mark could not be stored');
      }
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
