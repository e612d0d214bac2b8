/**
 * Operator commands claimed by their platform id (replicas): the first bridge to store a command has it, and the
 * others do nothing with it. One claimed for a room another bridge serves waits here for that bridge, which carries
 * it out and stores its answer for the bridge that claimed it (that one answers the operator).
 */
import type pg from 'pg';
import type { CommandClaimPort, WaitingCommand } from '../port.js';
import { rows, run, statement } from './pool.js';

const Q = {
  claim: statement(
    'command-claim',
    `INSERT INTO command_claims (id, platform, channel, event, received_by, state, received_at)
     VALUES ($1, $2, $3, $4, $5, 'taken', $6) ON CONFLICT DO NOTHING`,
  ),
  // The bridges are told at once (LISTEN/NOTIFY, signals.ts): the room's one takes it.
  wait: statement(
    'command-wait',
    `WITH left_ AS (UPDATE command_claims SET state = 'waiting', reply = coalesce($2, reply)
                    WHERE id = $1 AND state = 'taken' RETURNING id)
     SELECT pg_notify('roundtable', 'command') FROM left_`,
  ),
  // Those of rooms this bridge serves or no bridge does (a room never opened has no lease: anyone's).
  waiting: statement(
    'command-waiting',
    `SELECT k.id, k.event, k.received_by AS "receivedBy", k.reply FROM command_claims k
     LEFT JOIN channels c ON c.platform = k.platform AND c.channel = k.channel
     LEFT JOIN room_leases l ON l.room_id = c.id
     WHERE k.state = 'waiting'
       AND (l.room_id IS NULL OR l.holder = $1 OR l.expires_at <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
     ORDER BY k.received_at, k.id LIMIT 100`,
  ),
  take: statement('command-take', `UPDATE command_claims SET state = 'taken' WHERE id = $1 AND state = 'waiting'`),
  // The bridge that claimed it is told at once (LISTEN/NOTIFY, signals.ts). The reply route is no longer needed.
  answer: statement(
    'command-answer',
    `WITH answered AS (UPDATE command_claims SET state = 'answered', answer = $2, reply = NULL WHERE id = $1 RETURNING id)
     SELECT pg_notify('roundtable', 'answer:' || id) FROM answered`,
  ),
  answerOf: statement('command-answer-of', `SELECT answer FROM command_claims WHERE id = $1 AND state = 'answered'`),
  forget: statement('command-forget', 'DELETE FROM command_claims WHERE received_at < $1'),
};

export class PostgresCommandClaims implements CommandClaimPort {
  constructor(private readonly pool: pg.Pool) {}

  async claim(id: string, platform: string, channel: string, event: string, replica: string, at: number) {
    return (await run(this.pool, Q.claim, [id, platform, channel, event, replica, at])) > 0;
  }

  async wait(id: string, reply?: string): Promise<void> {
    await run(this.pool, Q.wait, [id, reply ?? null]);
  }

  async waiting(holder: string): Promise<WaitingCommand[]> {
    return rows<WaitingCommand>(this.pool, Q.waiting, [holder]);
  }

  async take(id: string): Promise<boolean> {
    return (await run(this.pool, Q.take, [id])) > 0;
  }

  async answer(id: string, text: string): Promise<void> {
    await run(this.pool, Q.answer, [id, text]);
  }

  async answerOf(id: string): Promise<string | undefined> {
    const [row] = await rows<{ answer: string | null }>(this.pool, Q.answerOf, [id]);
    return row ? (row.answer ?? '') : undefined;
  }

  async forget(before: number): Promise<void> {
    await run(this.pool, Q.forget, [before]);
  }
}
