import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import { handBack } from '../room/turns.js';
import type { Poster } from './poster.js';
import type { Requests } from './requests.js';
import type { Room } from './rooms.js';

/** Control goes back to a room's humans, with a line saying why when there is one. */
export type HandBack = (room: Room, reason: string, text?: string) => Promise<void>;

/** Queued agent turns dropped, the room's requests closed (requesters elsewhere resume), the line posted. */
export function handBackWith(deps: {
  readonly requests: Requests;
  readonly poster: Poster;
  readonly log: Logger;
}): HandBack {
  return async (room, reason, text) => {
    metrics.handBacks.inc({ reason });
    room.actor.dropTurns();
    room.state.setTurnState(handBack(reason));
    deps.requests.handBack(room.key);
    deps.log.info({ room: room.key, reason }, 'control handed back to the humans');
    if (text) await deps.poster.system(room, text);
  };
}
