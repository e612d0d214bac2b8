/**
 * A bit index of message vectors with sqlite-vec, loaded into the store's connection: each vector's signs (binary
 * quantization, 1 bit a dimension) in a vec0 table partitioned by room and audience, so a search reads one room's
 * visible vectors only, at 1/32 of their size. Its nearest neighbours by Hamming distance are candidates that the
 * store scores again exactly (cosine over the float vectors), so the index only decides what is read. Measured on
 * 100,000 vectors of 1,536 dimensions in one room: an exact scan takes about 0.7 s (vec_distance_cosine, and JS
 * alike), the bit index with 32 candidates per audience about 30 ms (docs/tokens.md).
 *
 * The index is derived from message_embeddings, which stays the record: one vec0 table per dimension count,
 * made on first use and rebuilt when its row count differs from the vectors it indexes (a run without the
 * extension wrote or deleted some); a temporary trigger on this connection drops a message's entry with its vector.
 */
import type Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { Logger } from '../../log.js';

/** Below this a float scan costs about what the index does (and signs of few dimensions say little). */
export const INDEX_MIN_DIMENSIONS = 256;
/** Candidates per audience read from the index for the exact scoring. */
export const CANDIDATES = 32;

export class VectorIndex {
  private readonly tables = new Set<number>();
  /** Prepared statements by their text (one set per table size). */
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(private readonly db: Database.Database) {
    const rows = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'message_bits_[0-9]*' AND sql LIKE '%vec0%'",
      )
      .all();
    for (const { name } of rows) {
      const dims = Number(name.slice('message_bits_'.length));
      if (Number.isInteger(dims) && dims > 0) this.attach(dims);
    }
  }

  /** Loads sqlite-vec into the connection; undefined (one log line) where it cannot load. */
  static open(db: Database.Database, log?: Logger): VectorIndex | undefined {
    try {
      sqliteVec.load(db);
    } catch (error) {
      log?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'sqlite-vec could not be loaded: recall scans every vector of a room instead',
      );
      return undefined;
    }
    return new VectorIndex(db);
  }

  /** Whether vectors of this size are indexed (it pays from INDEX_MIN_DIMENSIONS on; bits come in bytes). */
  static suits(dims: number): boolean {
    return dims >= INDEX_MIN_DIMENSIONS && dims % 8 === 0;
  }

  private table(dims: number): string {
    return `message_bits_${dims}`;
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Starts using a table: its trigger, and a rebuild when it is out of step with message_embeddings. */
  private attach(dims: number): void {
    const table = this.table(dims);
    this.db.exec(
      `CREATE TEMP TRIGGER IF NOT EXISTS ${table}_forget AFTER DELETE ON main.message_embeddings
       BEGIN DELETE FROM main.${table} WHERE rowid = old.message_id; END`,
    );
    this.tables.add(dims);
    const indexed = this.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
    const stored =
      this.db
        .prepare<[number], { n: number }>(
          'SELECT count(*) AS n FROM message_embeddings WHERE length(vector) = ? AND room_id IS NOT NULL',
        )
        .get(dims * 4)?.n ?? 0;
    if (indexed !== stored) this.rebuild(dims);
  }

  private rebuild(dims: number): void {
    const table = this.table(dims);
    this.db.transaction(() => {
      this.db.exec(`DELETE FROM ${table}`);
      this.db
        .prepare(
          `INSERT INTO ${table} (rowid, room_id, audience, bits, message_id)
           SELECT message_id, room_id, coalesce(audience, ''), vec_quantize_binary(vector), message_id
           FROM message_embeddings WHERE length(vector) = ? AND room_id IS NOT NULL`,
        )
        .run(dims * 4);
    })();
  }

  private ensure(dims: number): void {
    if (this.tables.has(dims)) return;
    this.db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${this.table(dims)} USING vec0(
         room_id integer partition key, audience text partition key, bits bit[${dims}], message_id integer)`,
    );
    this.attach(dims);
  }

  /** Indexes one stored vector (call inside the transaction that stores it); drops its entry of another size. */
  put(id: number, dims: number): void {
    for (const other of this.tables) {
      if (other !== dims) this.prepared(`DELETE FROM ${this.table(other)} WHERE rowid = ?`).run(BigInt(id));
    }
    if (!VectorIndex.suits(dims)) return;
    this.ensure(dims);
    const table = this.table(dims);
    this.prepared(`DELETE FROM ${table} WHERE rowid = ?`).run(BigInt(id));
    this.prepared(
      `INSERT INTO ${table} (rowid, room_id, audience, bits, message_id)
         SELECT message_id, room_id, coalesce(audience, ''), vec_quantize_binary(vector), message_id
         FROM message_embeddings WHERE message_id = ? AND room_id IS NOT NULL`,
    ).run(id);
  }

  /**
   * The message ids nearest to `vector` by the Hamming distance of their signs, up to CANDIDATES per audience
   * ('' for public messages), among a room's messages stored before `before`. Undefined when vectors of this
   * size are not indexed.
   */
  candidates(query: {
    roomId: number;
    vector: Float32Array;
    audiences: readonly string[];
    before: number;
  }): number[] | undefined {
    const dims = query.vector.length;
    if (!VectorIndex.suits(dims) || !this.tables.has(dims)) return undefined;
    const marks = query.audiences.map(() => '?').join(', ');
    const rows = this.prepared(
      `SELECT rowid AS id FROM ${this.table(dims)} WHERE bits MATCH vec_quantize_binary(?) AND room_id = ?
         AND audience IN (${marks}) AND message_id < ? AND k = ${CANDIDATES}`,
    ).all(
      Buffer.from(query.vector.buffer, query.vector.byteOffset, query.vector.byteLength),
      BigInt(query.roomId),
      ...query.audiences,
      BigInt(query.before),
    ) as Array<{ id: number | bigint }>;
    return rows.map((row) => Number(row.id));
  }
}
