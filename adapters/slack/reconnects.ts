/**
 * What a Socket Mode reconnect reads. Slack refreshes connections routinely and retries an event it could not
 * deliver (nearly at once, a minute later, five minutes later), so after a short gap nothing was missed: nothing is
 * read, and the rooms are in sync again once Slack's resends are in. After a long gap the rooms catch up, in the
 * background.
 */
import type { Logger } from '../../src/log.js';
import type { RoomMarks } from '../shared/room-marks.js';

/** A gap shorter than this is covered by Slack's retry a minute later: nothing was missed. */
export const RESEND_WINDOW_MS = 60_000;
/** When the rooms are in sync again after a short gap: Slack's retry a minute later is in by then. */
const RESUME_AFTER_MS = RESEND_WINDOW_MS + 30_000;

export class Reconnects {
  /** App → when its connection dropped (it is down now). */
  private readonly downSince = new Map<string, number>();
  /** Some app was down long enough to miss what Slack no longer resends. */
  private longGap = false;
  private resume: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      readonly marks: RoomMarks;
      /** Reads what the rooms missed, in the background. */
      readonly catchUp: () => void;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {}

  /** An app's connection dropped: until it is back (and Slack has resent), the rooms may miss messages. */
  down(app: string): void {
    if (this.downSince.has(app)) return;
    this.downSince.set(app, this.deps.clock());
    this.cancelResume();
    this.deps.marks.dropped();
  }

  /** An app's connection is back: nothing is read after a short gap, the rooms catch up after a long one. */
  up(app: string): void {
    const since = this.downSince.get(app);
    if (since === undefined) return;
    this.downSince.delete(app);
    const gapMs = this.deps.clock() - since;
    if (gapMs >= RESEND_WINDOW_MS) this.longGap = true;
    // Until every app is back, the rooms stay out of sync.
    if (this.downSince.size > 0) return;
    if (this.longGap) {
      this.longGap = false;
      this.deps.log.info({ app, gapMs }, 'slack reconnected after a long gap: catching up in the background');
      this.deps.marks.unresumable();
      this.deps.catchUp();
      return;
    }
    this.deps.log.debug({ app, gapMs }, 'slack reconnected: Slack resends what it could not deliver, nothing is read');
    this.resume = setTimeout(() => this.deps.marks.resumed(), RESUME_AFTER_MS);
    this.resume.unref();
  }

  stop(): void {
    this.cancelResume();
  }

  private cancelResume(): void {
    if (this.resume) clearTimeout(this.resume);
    this.resume = undefined;
  }
}
