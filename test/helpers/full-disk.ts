/**
 * A full disk for the test's SQLite store, without root or a small file system: the database may not grow
 * (`PRAGMA max_page_count` at its size) and the pages it has are filled, so every write that stores a message fails
 * as on a full disk, with SQLITE_FULL ("database or disk is full"). `free()` gives the space back.
 */
import type Database from 'better-sqlite3';

export interface FullDisk {
  free(): void;
}

export function fillDisk(db: Database.Database): FullDisk {
  db.prepare(
    "INSERT INTO channels (platform, channel, created_at) VALUES ('filler', 'disk', 0) ON CONFLICT DO NOTHING",
  ).run();
  const { id } = db.prepare("SELECT id FROM channels WHERE platform = 'filler'").get() as { id: number };
  db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
  // Messages of a room no adapter has take every free page, then the room left in the newest page, to the byte.
  const fill = db.prepare(
    "INSERT INTO messages (channel_id, author, author_id, kind, content, mentions, created_at) VALUES (?, 'disk', 'disk', 'system', ?, '[]', 0)",
  );
  for (let size = 8192; size >= 1; size = Math.floor(size / 2)) {
    for (;;) {
      try {
        fill.run(id, 'x'.repeat(size));
      } catch (error) {
        if ((error as { code?: unknown }).code === 'SQLITE_FULL') break;
        throw error;
      }
    }
  }
  return {
    free: () => {
      db.pragma('max_page_count = 1073741823');
    },
  };
}
