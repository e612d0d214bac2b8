/**
 * Wake-ups between bridges sharing this database (replicas), by `LISTEN/NOTIFY`: the statements that keep an event, a
 * note or a command for another bridge's room, or store a command's answer, also `pg_notify` on one channel (in the
 * same statement, so the signal goes out when — and only if — the transaction commits). Each bridge listens on one
 * connection of its own, outside the pool; when that connection drops it is opened again with growing waits (the drop
 * and the return are one log line each, naming the database with its password redacted; the failed tries between are
 * debug lines), and the bridge is told (`reconnected`) so it looks at the store for what it may have missed. The bridges' regular
 * looks stay: a signal only makes the next one come at once.
 */
import pg from 'pg';
import type { Logger } from '../../log.js';
import { redactUrl } from '../../secrets.js';
import type { StoreSignal, StoreSignals } from '../port.js';

/** The channel every bridge listens on; payloads are `inbox`, `note`, `command` and `answer:<command id>`. */
export const SIGNAL_CHANNEL = 'roundtable';
/** How the listening connection shows in pg_stat_activity. */
export const LISTENER_NAME = 'roundtable-listener';

export class PostgresSignals implements StoreSignals {
  constructor(private readonly config: pg.ClientConfig) {}

  listen(
    on: (signal: StoreSignal) => void,
    options: { readonly log: Logger; readonly backoff: (tries: number) => number },
  ): () => Promise<void> {
    const listener = new Listener(this.config, on, options.log, options.backoff);
    listener.start();
    return () => listener.stop();
  }
}

/** Parses a payload; undefined for one this version does not know. */
export function parseSignal(payload: string | undefined): StoreSignal | undefined {
  if (payload === 'inbox' || payload === 'note' || payload === 'command') return { kind: payload };
  if (payload?.startsWith('answer:')) return { kind: 'answer', id: payload.slice('answer:'.length) };
  return undefined;
}

class Listener {
  private client: pg.Client | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private tries = 0;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly on: (signal: StoreSignal) => void,
    private readonly log: Logger,
    private readonly backoff: (tries: number) => number,
  ) {}

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** The database, as the log names it (its password redacted). */
  private where(): string {
    const { connectionString, host, port, database } = this.config;
    return connectionString ? redactUrl(connectionString) : `${host ?? 'localhost'}:${port ?? 5432}/${database ?? ''}`;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ ...this.config, application_name: LISTENER_NAME });
    let dropped = false;
    const drop = (error: unknown) => {
      if (dropped) return;
      dropped = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.tries += 1;
      const wait = this.backoff(this.tries);
      if (this.tries === 1) {
        const reason = error instanceof Error ? error.message || (error as NodeJS.ErrnoException).code : String(error);
        this.log.warn(
          { err: error, retryInMs: wait },
          `the store listening connection to ${this.where()} dropped (${reason}); connecting again`,
        );
      } else
        this.log.debug(
          { err: error, tries: this.tries, retryInMs: wait },
          'the store listening connection failed again',
        );
      this.timer = setTimeout(() => void this.connect(), wait);
      this.timer.unref();
    };
    // Without listeners an error on this connection would end the process.
    client.on('error', drop);
    client.on('end', () => drop(new Error('the connection ended')));
    client.on('notification', (message) => {
      const signal = parseSignal(message.payload);
      if (signal) this.on(signal);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${SIGNAL_CHANNEL}`);
    } catch (error) {
      drop(error);
      return;
    }
    if (this.stopped || dropped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    const again = this.tries > 0;
    this.tries = 0;
    if (again) {
      this.log.info(`the store listening connection to ${this.where()} is back`);
      // What was signalled while it was down is looked for now.
      this.on({ kind: 'reconnected' });
    }
  }
}
