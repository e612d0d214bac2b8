/**
 * Platform events a bridge received for a room another bridge serves (replicas): Slack gives each event to one bridge
 * only, and a room's holder may have died before it stored one. The holder takes them (as if just received) and
 * forgets them; an event it had stored already is a duplicate there, so taking one twice changes nothing. Notes
 * between rooms are read here the same way: those of the rooms a bridge serves, or nobody does.
 */
import type pg from 'pg';
import type { Note } from '../../room/events.js';
import type { InboxEvent, InboxPort, NoteRecord } from '../port.js';
import { rows, run, statement } from './pool.js';
import { writeError } from './write-errors.js';

const Q = {
  put: statement(
    'inbox-put',
    // The room's bridge is told at once (LISTEN/NOTIFY, signals.ts) when the event is new.
    `WITH kept AS (
       INSERT INTO room_inbox (platform, channel, platform_message_id, event, received_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING id)
     SELECT pg_notify('roundtable', 'inbox') FROM kept`,
  ),
  // Events of rooms this bridge serves or no bridge does; those of rooms another live bridge serves are its own.
  list: statement(
    'inbox-list',
    `SELECT i.id, i.platform, i.channel, i.event FROM room_inbox i
     LEFT JOIN channels c ON c.platform = i.platform AND c.channel = i.channel
     LEFT JOIN room_leases l ON l.room_id = c.id
     WHERE l.room_id IS NULL OR l.holder = $1 OR l.expires_at <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint
     ORDER BY i.id LIMIT 1000`,
  ),
  done: statement('inbox-done', 'DELETE FROM room_inbox WHERE id = ANY($1::bigint[])'),
  // Notes are kept by room key (`platform:channel`); a note for a room never opened has no lease, so it is anyone's.
  notes: statement(
    'inbox-notes',
    `SELECT n.id, n.room, n.note FROM notes n
     LEFT JOIN channels c ON c.platform || ':' || c.channel = n.room
     LEFT JOIN room_leases l ON l.room_id = c.id
     WHERE l.room_id IS NULL OR l.holder = $1 OR l.expires_at <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint
     ORDER BY n.rowid LIMIT 1000`,
  ),
};

export class PostgresInbox implements InboxPort {
  constructor(private readonly pool: pg.Pool) {}

  async put(platform: string, channel: string, platformId: string, event: string, at: number): Promise<void> {
    try {
      await run(this.pool, Q.put, [platform, channel, platformId, event, at]);
    } catch (error) {
      // Retryable while the database is away: the receiving bridge holds the event and keeps it later.
      throw writeError(error);
    }
  }

  async list(holder: string): Promise<InboxEvent[]> {
    return rows<InboxEvent>(this.pool, Q.list, [holder]);
  }

  async done(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await run(this.pool, Q.done, [ids]);
  }

  async notes(holder: string): Promise<NoteRecord[]> {
    const found = await rows<{ id: string; room: string; note: string }>(this.pool, Q.notes, [holder]);
    return found.map((row) => ({ id: row.id, room: row.room, note: JSON.parse(row.note) as Note }));
  }
}
