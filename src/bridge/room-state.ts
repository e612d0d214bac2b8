import { countMessage } from '../room/turns.js';
import type { RoomMessage, TurnState } from '../room/types.js';
import type { ChannelRow, NewMessage, Store } from '../store/index.js';

/**
 * One room's persistent state with a write-through cache: the turn state and a window of recent
 * messages stay in memory, so routing a message reads nothing back from SQLite.
 */
export class RoomState {
  private turn: TurnState;
  private window: RoomMessage[];

  constructor(
    private readonly store: Store,
    readonly row: ChannelRow,
    /** How many recent messages routing and context building need. */
    private readonly size: number,
  ) {
    this.turn = store.turnState(row.id);
    this.window = store.history(row.id, size);
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

  /** Stores a message once and counts it toward the turn limit; null when it was already stored. */
  record(message: Omit<NewMessage, 'channelId'>): RoomMessage | null {
    const stored = this.store.insertMessage({ ...message, channelId: this.row.id });
    if (!stored) return null;
    this.window.push(stored);
    if (this.window.length > this.size * 2) this.window = this.window.slice(-this.size);
    this.setTurnState(countMessage(this.turn, stored.kind));
    return stored;
  }

  addPlatformIds(message: RoomMessage, ids: readonly string[]): void {
    this.store.addPlatformIds(this.row.id, message.id, ids);
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

  clear(): void {
    this.store.clearHistory(this.row.id);
    this.window = [];
  }
}
