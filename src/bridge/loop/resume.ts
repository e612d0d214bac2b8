/**
 * Taking a room up from what the store keeps: after a restart, or from another bridge that died or stopped (replicas).
 * Its turn in flight is taken again (the tool runs it made answered from the journal), its unsent posts go out
 * first, its deadlines are set again.
 */
import type { RoomState } from '../../room/state.js';
import type { RoomRecord, ToolJournal } from '../../store/port.js';
import type { RoomActor } from './room-actor.js';

/** Whether a room's stored state has work a bridge must take up. */
export function hasWork(state: RoomState | null): boolean {
  if (!state) return false;
  return Boolean(
    state.current || state.posts.length > 0 || state.queue.length > 0 || state.requests.length > 0 || state.batch,
  );
}

/** Hands the room its `restart` event (with the tool runs of the turn that was cut, if any). */
export async function resume(actor: RoomActor, record: RoomRecord, journal: ToolJournal): Promise<void> {
  const ask = record.state?.current?.ask;
  const runs = ask ? await journal.runs(record.key, ask.id) : [];
  void actor.deliver({
    type: 'restart',
    ...(ask && runs.length > 0
      ? {
          cut: {
            ask: ask.id,
            runs: runs.map((r) => ({ tool: r.tool, input: r.input || r.args, cut: r.status === 'started' })),
          },
        }
      : {}),
  });
}
