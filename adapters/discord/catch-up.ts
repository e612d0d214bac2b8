/**
 * After a (re)connect, reads what a room received while nobody listened: `GET /channels/:id/messages?after=`
 * from the last message seen, oldest first. The bridge's dedupe makes a message fetched twice harmless.
 */
import { type APIMessage, type Client, Routes } from 'discord.js';

/** At most this many pages of 100 per room and reconnect; older gaps are left to the humans to repeat. */
const MAX_PAGES = 10;

export async function fetchMissed(client: Client, channelId: string, after: string): Promise<APIMessage[]> {
  const missed: APIMessage[] = [];
  let cursor = after;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const batch = (await client.rest.get(Routes.channelMessages(channelId), {
      query: new URLSearchParams({ after: cursor, limit: '100' }),
    })) as APIMessage[];
    if (batch.length === 0) break;
    batch.sort((a, b) => compareIds(a.id, b.id));
    missed.push(...batch);
    const newest = batch.at(-1);
    if (batch.length < 100 || !newest) break;
    cursor = newest.id;
  }
  return missed;
}

/** Snowflakes order by time; compare them as numbers, not strings. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
