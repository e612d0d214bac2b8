export type { ChatRequest, ChatRequestStatus } from './collaboration.js';
export { ChatStore, ThreadStore } from './collaboration.js';
export type { OutboxEntry, OutboxPurpose, ToolRunRow, TurnOutcome, WorkRow } from './journal.js';
export { JournalStore } from './journal.js';
export { MIGRATIONS_DIR, migrate, readMigrations } from './migrate.js';
export type { ChannelRow, NewMessage } from './store.js';
export { openStore, Store } from './store.js';
