/**
 * A database's schema as both dialects can be compared: tables, their columns (kind of value, nullable), primary
 * keys, unique keys, foreign keys and named indexes, read from each database's own catalogue (SQLite's sqlite_master
 * and pragmas; Postgres's information_schema and pg_index).
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';

export interface TableShape {
  /** `name kind [not null]`, in name order. */
  readonly columns: string[];
  readonly primaryKey: string[];
  /** Column lists of the UNIQUE constraints, sorted. */
  readonly unique: string[];
  /** `columns -> table(columns) on delete ACTION`, sorted. */
  readonly foreignKeys: string[];
  /** `name (columns) [unique] [partial]` of each index made by CREATE INDEX, sorted. */
  readonly indexes: string[];
}

export type SchemaShape = Record<string, TableShape>;

/** The kind of value a column holds, whatever each dialect calls it. */
function kind(type: string): string {
  const t = type.toLowerCase();
  if (/int/.test(t)) return 'integer';
  if (/text|char/.test(t)) return 'text';
  if (/blob|bytea/.test(t)) return 'bytes';
  return t;
}

const column = (name: string, type: string, notNull: boolean) => `${name} ${kind(type)}${notNull ? ' not null' : ''}`;
const deleteRule = (rule: string) => (rule.toUpperCase() === 'NO ACTION' ? '' : ` on delete ${rule.toLowerCase()}`);

export function sqliteSchema(db: Database.Database): SchemaShape {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as Array<{ name: string }>;
  const shape: SchemaShape = {};
  for (const { name } of tables) {
    const info = db.pragma(`table_info(${name})`) as Array<{ name: string; type: string; notnull: number; pk: number }>;
    const indexList = db.pragma(`index_list(${name})`) as Array<{
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }>;
    const indexColumns = (index: string) =>
      (db.pragma(`index_info(${index})`) as Array<{ seqno: number; name: string }>)
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => c.name)
        .join(', ');
    const fks = db.pragma(`foreign_key_list(${name})`) as Array<{
      id: number;
      seq: number;
      table: string;
      from: string;
      to: string;
      on_delete: string;
    }>;
    const byId = new Map<number, typeof fks>();
    for (const fk of fks) byId.set(fk.id, [...(byId.get(fk.id) ?? []), fk]);
    shape[name] = {
      // A primary key's columns are never null (SQLite lets a non-integer one be, but the store never writes that).
      columns: info.map((c) => column(c.name, c.type, c.notnull === 1 || c.pk > 0)).sort(),
      primaryKey: info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      unique: indexList
        .filter((i) => i.origin === 'u')
        .map((i) => indexColumns(i.name))
        .sort(),
      foreignKeys: [...byId.values()]
        .map((parts) => {
          const sorted = [...parts].sort((a, b) => a.seq - b.seq);
          const first = sorted[0];
          return `${sorted.map((p) => p.from).join(', ')} -> ${first?.table}(${sorted.map((p) => p.to).join(', ')})${deleteRule(first?.on_delete ?? '')}`;
        })
        .sort(),
      indexes: indexList
        .filter((i) => i.origin === 'c')
        .map((i) => `${i.name} (${indexColumns(i.name)})${i.unique ? ' unique' : ''}${i.partial ? ' partial' : ''}`)
        .sort(),
    };
  }
  return shape;
}

export async function postgresSchema(sql: Pick<pg.Pool, 'query'>): Promise<SchemaShape> {
  const query = async <R>(text: string, values: unknown[] = []) => (await sql.query(text, values)).rows as R[];
  const tables = await query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const shape: SchemaShape = {};
  for (const { name } of tables) {
    const columns = await query<{ name: string; type: string; nullable: string }>(
      `SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1`,
      [name],
    );
    const constraintColumns = async (type: string) =>
      query<{ constraint: string; columns: string[] }>(
        `SELECT tc.constraint_name AS constraint, array_agg(k.column_name::text ORDER BY k.ordinal_position) AS columns
         FROM information_schema.table_constraints tc
         JOIN information_schema.key_column_usage k
           ON k.constraint_name = tc.constraint_name AND k.constraint_schema = tc.constraint_schema
         WHERE tc.table_schema = current_schema() AND tc.table_name = $1 AND tc.constraint_type = $2
         GROUP BY tc.constraint_name`,
        [name, type],
      );
    const foreignKeys = await query<{ columns: string[]; target: string; targets: string[]; rule: string }>(
      `SELECT array_agg(a.attname::text ORDER BY k.n) AS columns, t.relname AS target,
         array_agg(ta.attname::text ORDER BY k.n) AS targets,
         CASE c.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE'
           WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END AS rule
       FROM pg_constraint c
       JOIN pg_class s ON s.oid = c.conrelid
       JOIN pg_class t ON t.oid = c.confrelid
       CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k (attnum, target_attnum, n)
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
       JOIN pg_attribute ta ON ta.attrelid = c.confrelid AND ta.attnum = k.target_attnum
       WHERE c.contype = 'f' AND s.relname = $1 AND s.relnamespace = current_schema()::regnamespace
       GROUP BY c.oid, t.relname, c.confdeltype`,
      [name],
    );
    const indexes = await query<{ name: string; unique: boolean; partial: boolean; columns: string[] }>(
      `SELECT i.relname AS name, ix.indisunique AS unique, ix.indpred IS NOT NULL AS partial,
         array(SELECT a.attname::text FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k (attnum, n)
               JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       WHERE t.relname = $1 AND t.relnamespace = current_schema()::regnamespace
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid)`,
      [name],
    );
    shape[name] = {
      columns: columns.map((c) => column(c.name, c.type, c.nullable === 'NO')).sort(),
      primaryKey: (await constraintColumns('PRIMARY KEY'))[0]?.columns ?? [],
      unique: (await constraintColumns('UNIQUE')).map((u) => u.columns.join(', ')).sort(),
      foreignKeys: foreignKeys
        .map((fk) => `${fk.columns.join(', ')} -> ${fk.target}(${fk.targets.join(', ')})${deleteRule(fk.rule)}`)
        .sort(),
      indexes: indexes
        .map((i) => `${i.name} (${i.columns.join(', ')})${i.unique ? ' unique' : ''}${i.partial ? ' partial' : ''}`)
        .sort(),
    };
  }
  return shape;
}
