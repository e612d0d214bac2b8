import { type Logger as BoltLogger, LogLevel } from '@slack/bolt';
import type { Logger } from '../../src/log.js';

function text(parts: unknown[]): string {
  return parts.map((p) => (typeof p === 'string' ? p : p instanceof Error ? p.message : JSON.stringify(p))).join(' ');
}

/**
 * Bolt's logger interface over pino, so Bolt's lines go through the bridge's redaction.
 * Bolt reports routine connection chatter at info; that goes to debug here.
 */
export function boltLogger(logger: Logger): BoltLogger {
  return {
    debug: (...parts: unknown[]) => logger.debug(text(parts)),
    info: (...parts: unknown[]) => logger.debug(text(parts)),
    warn: (...parts: unknown[]) => logger.warn(text(parts)),
    error: (...parts: unknown[]) => logger.error(text(parts)),
    setLevel: () => {},
    getLevel: () => (logger.isLevelEnabled('debug') ? LogLevel.DEBUG : LogLevel.INFO),
    setName: () => {},
  };
}
