/** A message as the store keeps it, before and after: the same in every dialect. */
import type { StoredMessage } from '../room/effects.js';
import type { ToolRun } from '../room/events.js';
import type { RoomMessage } from '../room/types.js';

/** A message write, as the room's reading of a message makes it (an agent's reply carries its turn's tool runs). */
export type MessageWrite = StoredMessage & { readonly toolRuns?: readonly ToolRun[] | undefined };

/**
 * The message a store reads back for `message` stored under row id `id`, whichever the store (SQLite's `toMessage`,
 * Postgres's reading): what a room's window adds for a commit without reading it again.
 */
export function storedMessage(id: number, message: MessageWrite): RoomMessage {
  const runs = message.toolRuns ?? [];
  return {
    id,
    author: message.author,
    authorId: message.authorId,
    kind: message.kind,
    content: message.text,
    mentions: [...message.mentions],
    ...(message.requests !== undefined ? { requests: [...message.requests] } : {}),
    ...(message.audience !== null ? { audience: [...message.audience] } : {}),
    toolRuns: runs.map((run) => ({ ...run })),
    ...(message.files && message.files.length > 0 ? { files: [...message.files] } : {}),
    at: message.at,
  };
}
