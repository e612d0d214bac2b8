export { MIGRATIONS_DIR, type Migration, readMigrations } from './migrations.js';
export type {
  ActionPort,
  ActionRow,
  ChatPort,
  ChatRequest,
  ChatRequestStatus,
  CommitResult,
  DecisionRow,
  EmbeddingPort,
  KnowledgePort,
  KnowledgeRow,
  NoteRecord,
  PeoplePort,
  RoomRecord,
  RoomStore,
  StorePort,
  ToolJournal,
  ToolRunRecord,
  TranscriptRow,
  UsagePort,
  UsageRow,
  WebIdentity,
  WebPerson,
} from './port.js';
export { migrate } from './sqlite/migrate.js';
export { openStore, type SqliteOptions, SqliteStore } from './sqlite/store.js';
