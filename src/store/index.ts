export type { ChatRequest, ChatRequestStatus } from './collaboration.js';
export { ChatStore, ThreadStore } from './collaboration.js';
export { EmbeddingStore } from './embeddings.js';
export { MIGRATIONS_DIR, migrate, readMigrations } from './migrate.js';
export type { ChannelRow, NewMessage } from './store.js';
export { openStore, Store } from './store.js';
export type { UsageRow } from './usage.js';
export { UsageStore } from './usage.js';
