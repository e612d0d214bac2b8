/**
 * The bridge's lines that go straight to a platform room without being stored (the store may be what fails): posted
 * through the room's adapter, and their echoes recognised, so that a line about the store never comes back in as an
 * agent's message once the store works again.
 */
import type { Logger } from '../../log.js';
import type { ChatAdapter } from '../../ports.js';
import { redact } from '../../secrets.js';
import { PRIVATE_PLATFORM } from '../executors/private-rooms.js';
import { isOutageLine } from '../loop/store-outage.js';

/** Platform ids of the notices posted, kept for their echoes (the newest this many). */
const KEPT = 200;

export class Notices {
  private readonly posted = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: {
      readonly adapters: ReadonlyMap<string, ChatAdapter>;
      readonly log: Logger;
    },
  ) {}

  /**
   * Posts a line of the bridge's own to a room (a private agent chat has no one to tell), through `agent`'s identity
   * where only it can post (a DM with it); never throws.
   */
  post(platform: string, channel: string, text: string, agent?: string): Promise<void> {
    const adapter = this.deps.adapters.get(platform);
    if (!adapter || platform === PRIVATE_PLATFORM) return Promise.resolve();
    const work = adapter.post({ channel, agent: agent ?? null, text: redact(text) }).then(
      (posted) => {
        for (const id of posted.messageIds) this.remember(id);
      },
      (error: unknown) => this.deps.log.warn({ err: error, platform, channel }, 'a notice could not be posted'),
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  /**
   * Whether a message of one of the bridge's identities is the echo of a notice (waits for notices still being posted
   * first), or a line about the store posted before a restart or by another replica, read again by a catch-up.
   */
  async isNotice(platformId: string, text: string): Promise<boolean> {
    if (isOutageLine(text)) return true;
    if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    return this.posted.has(platformId);
  }

  private remember(id: string): void {
    this.posted.add(id);
    if (this.posted.size > KEPT) {
      const oldest = this.posted.values().next().value;
      if (oldest !== undefined) this.posted.delete(oldest);
    }
  }
}
