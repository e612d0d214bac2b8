export { MIGRATIONS_DIR, type Migration, readMigrations } from './migrations.js';
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
  PendingEmbedding,
  ReserveResult,
  RoomRecord,
  RoomStore,
  SpendPort,
  SpendRow,
  SpendScope,
  StorePort,
  ToolJournal,
  ToolRunRecord,
  UsagePort,
  UsageRow,
  VectorQuery,
} from './port.js';
export { migrate } from './sqlite/migrate.js';
export { openStore, type SqliteOptions, SqliteStore } from './sqlite/store.js';
