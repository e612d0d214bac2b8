import type { PrivacyMode } from '../room/privacy.js';
import { privacyMode } from '../room/privacy.js';
import { countMessage } from '../room/turns.js';
import type { RoomMessage, TurnState } from '../room/types.js';
import type { ChannelRow, NewMessage, Store } from '../store/index.js';

/**
 * One room's persistent state with a write-through cache: the turn state, the privacy mode, the humans
 * seen and a window of recent messages stay in memory, so routing a message reads nothing back from SQLite.
 */
export class RoomState {
  private turn: TurnState;
  private window: RoomMessage[];
  private stored: PrivacyMode | null;
  /** Display names of the humans seen here, lower-cased key -> spelling (they are mentionable). */
  private readonly people = new Map<string, string>();

  constructor(
    private readonly store: Store,
    readonly row: ChannelRow,
    /** How many recent messages routing and context building need. */
    private readonly size: number,
    /** The configured privacy for this room (PRIVACY, PRIVACY_ROOMS). */
    private readonly configuredPrivacy: PrivacyMode,
  ) {
    this.turn = store.turnState(row.id);
    this.window = store.history(row.id, size);
    this.stored = row.privacy;
    for (const name of store.humans(row.id)) this.people.set(name.toLowerCase(), name);
  }

  get turnState(): TurnState {
    return this.turn;
  }

  setTurnState(next: TurnState): void {
    const same =
      next.consecutive === this.turn.consecutive &&
      next.control === this.turn.control &&
      next.reason === this.turn.reason;
    if (same) return;
    this.store.setTurnState(this.row.id, next);
    this.turn = next;
  }

  /** The room's privacy: an operator's /privacy wins over the configuration until changed again. */
  get privacy(): PrivacyMode {
    return privacyMode(this.stored, this.configuredPrivacy);
  }

  setPrivacy(mode: PrivacyMode): void {
    this.store.setPrivacy(this.row.id, mode);
    this.stored = mode;
  }

  /** Humans who spoke in this room, by display name. */
  humans(): string[] {
    return [...this.people.values()];
  }

  /** Stores a message once and counts it toward the turn limit; null when it was already stored. */
  record(message: Omit<NewMessage, 'channelId'>): RoomMessage | null {
    const stored = this.store.insertMessage({ ...message, channelId: this.row.id });
    if (!stored) return null;
    if (stored.kind === 'human') this.people.set(stored.author.toLowerCase(), stored.author);
    this.window.push(stored);
    if (this.window.length > this.size * 2) this.window = this.window.slice(-this.size);
    this.setTurnState(countMessage(this.turn, stored.kind));
    return stored;
  }

  /** Keeps platform ids of a post that is not part of the history (so its echo is recognised). */
  remember(ids: readonly string[]): void {
    this.store.addPlatformIds(this.row.id, null, ids);
  }

  /** True when this platform message id is already stored in the room. */
  seen(platformId: string): boolean {
    return this.store.seen(this.row.id, platformId);
  }

  /** The most recent messages, oldest first. */
  history(): readonly RoomMessage[] {
    return this.window.length > this.size ? this.window.slice(-this.size) : this.window;
  }

  /** The author's previous agent message text before message id `before` (for the no-progress guard). */
  previousOwn(author: string, before = Number.POSITIVE_INFINITY): string | undefined {
    const history = this.history();
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (m && m.id < before && m.kind === 'agent' && m.author.toLowerCase() === author.toLowerCase()) {
        return m.content;
      }
    }
    return undefined;
  }

  clear(): void {
    this.store.clearHistory(this.row.id);
    this.window = [];
  }
}
