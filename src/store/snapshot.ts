/**
 * A room's state snapshot is written only when something changed that the messages cannot tell. Most decisions (a
 * human message that wakes nobody) change nothing but `seq` and `lastHuman`, and both are in the messages table:
 * the newest seq, and the newest seq of a human message. So a store keeps the room's last committed state in memory,
 * skips the snapshot write when the rest (the "core") is equal, and raises the two fields from the messages on load.
 */
import type { Write } from '../room/effects.js';
import { type RoomState, readOlder } from '../room/state.js';

/** The fields derived from the messages on load. */
export interface Derived {
  readonly seq: number;
  readonly lastHuman: number;
}

/** The stored snapshot as the room reads it now, with `seq` and `lastHuman` raised to what the stored messages say. */
export function withDerived(stored: RoomState, messages: Derived): RoomState {
  const state = readOlder(stored);
  if (state.seq >= messages.seq && state.lastHuman >= messages.lastHuman) return state;
  return { ...state, seq: Math.max(state.seq, messages.seq), lastHuman: Math.max(state.lastHuman, messages.lastHuman) };
}

/**
 * Whether `next` can be left unwritten after `last` (the room's last committed state): its core is equal, and its
 * `seq` and `lastHuman` are exactly what loading would derive from `last` and the messages these writes store.
 */
export function derivable(last: RoomState, writes: readonly Write[], next: RoomState): boolean {
  let seq = last.seq;
  let lastHuman = last.lastHuman;
  for (const write of writes) {
    if (write.type !== 'message') continue;
    seq = Math.max(seq, write.message.seq);
    if (write.message.kind === 'human') lastHuman = Math.max(lastHuman, write.message.seq);
  }
  return next.seq === seq && next.lastHuman === lastHuman && sameCore(last, next);
}

/** Equal as stored (JSON), ignoring `seq` and `lastHuman`. */
export function sameCore(a: RoomState, b: RoomState): boolean {
  if (a === b) return true;
  return sameFields(a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>, true);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  return sameFields(a as Record<string, unknown>, b as Record<string, unknown>, false);
}

/** Object fields, as JSON sees them: an `undefined` field is an absent one. */
function sameFields(a: Record<string, unknown>, b: Record<string, unknown>, core: boolean): boolean {
  let count = 0;
  for (const key in a) {
    const value = a[key];
    if (value === undefined || (core && (key === 'seq' || key === 'lastHuman'))) continue;
    count++;
    if (!sameJson(value, b[key])) return false;
  }
  for (const key in b) {
    if (b[key] === undefined || (core && (key === 'seq' || key === 'lastHuman'))) continue;
    count--;
  }
  return count === 0;
}
