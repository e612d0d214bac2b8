/**
 * What tests read back from the store after a conversation, through the store port: a room's messages, its count and
 * control, and the requests (in the shape the tests compare).
 */
import type { RequestRow } from '../../src/room/effects.js';
import { EMPTY_STATE, type RoomState } from '../../src/room/state.js';
import type { RoomMessage } from '../../src/room/types.js';
import type { StorePort } from '../../src/store/index.js';

type Store = Pick<StorePort, 'rooms'>;

/** A room's state as last committed. */
export async function roomState(store: Store, platform: string, channel: string): Promise<RoomState> {
  return (await store.rooms.open(platform, channel)).state ?? EMPTY_STATE;
}

/** The count of agent messages in a row and who holds control, as /status shows them. */
export async function turnState(
  store: Store,
  platform: string,
  channel: string,
): Promise<{ consecutive: number; control: 'agents' | 'humans'; reason?: string }> {
  const { control } = await roomState(store, platform, channel);
  return {
    consecutive: control.count,
    control: control.holder,
    ...(control.reason !== undefined ? { reason: control.reason } : {}),
  };
}

/** A room's stored messages, oldest first. */
export async function history(store: Store, platform: string, channel: string, limit = 5000): Promise<RoomMessage[]> {
  const room = await store.rooms.open(platform, channel);
  return store.rooms.history(room.id, limit);
}

/** A request as the tests compare it. */
export interface RequestView {
  readonly id: number;
  readonly requester: string;
  readonly originRoom: string;
  readonly targetRoom: string;
  readonly parentId: number | null;
  readonly awaited: RequestRow['awaited'];
  readonly status: RequestRow['status'];
  readonly answers: ReadonlyArray<{ participant: string; text: string; outcome: string }>;
}

/** Every request the store knows, oldest first. */
export async function requests(store: Store): Promise<RequestView[]> {
  return (await store.rooms.requests()).map((r) => ({
    id: r.id,
    requester: r.requester,
    originRoom: r.origin,
    targetRoom: r.target,
    parentId: r.parent,
    awaited: r.awaited,
    status: r.status,
    answers: r.answers.map((a) => ({ participant: a.participant, text: a.text, outcome: a.outcome })),
  }));
}

/** Requests not yet closed: waiting for answers or for their requester's resume. */
export async function liveRequests(store: Store): Promise<RequestView[]> {
  return (await requests(store)).filter(
    (r) => r.status === 'open' || r.status === 'answered' || r.status === 'expired',
  );
}
