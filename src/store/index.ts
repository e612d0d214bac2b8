export {
  MIGRATIONS_DIR,
  type Migration,
  POSTGRES_MIGRATIONS_DIR,
  pendingMigrations,
  readMigrations,
} from './migrations.js';
export { checkStoreFrom, type OpenOptions, openStoreFrom, SQLITE_FILE, type StoreChoice } from './open.js';
export type {
  ActionPort,
  ActionRow,
  ChatPort,
  ChatRequest,
  ChatRequestStatus,
  CommitResult,
  EmbeddingPort,
  KnowledgePort,
  KnowledgeRow,
  NoteRecord,
  RoomRecord,
  RoomStore,
  StorePort,
  ToolJournal,
  ToolRunRecord,
  UsagePort,
  UsageRow,
} from './port.js';
export { migrate } from './sqlite/migrate.js';
export { openStore, type SqliteOptions, SqliteStore } from './sqlite/store.js';
