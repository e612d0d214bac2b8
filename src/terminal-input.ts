/**
 * The terminal room with nobody at it. With no platform tokens the bridge opens the terminal room;
 * where standard input is not a terminal and ends before a single line (`docker compose up`,
 * `npm start </dev/null`, nohup, a systemd unit) the room would close at once and the bridge exit
 * 0, and a restart policy would start it again and again without a word. It stops with one line
 * saying what to set instead. Piped lines (`printf '@code hi\n' | npm start`) work as ever.
 */
import { ReadStream } from 'node:fs';
import type { Config } from './config/index.js';
import { RoundtableError } from './errors.js';

/** The terminal room would have nothing to read and nobody to answer. */
export class NothingToServeError extends RoundtableError {
  constructor(message: string) {
    super('nothing-to-serve', message);
  }
}

/**
 * Whether the input is a file (or /dev/null) that ends before any byte, found out before the room
 * opens. A pipe or a terminal may still bring lines later: false for those (the room opens, and the
 * end of its input is judged then). The first bytes read, if any, are put back for the room.
 */
export function endsAtOnce(input: NodeJS.ReadableStream): Promise<boolean> {
  if (!(input instanceof ReadStream)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (ended: boolean) => {
      input.off('readable', onReadable);
      input.off('error', onError);
      resolve(ended);
    };
    const onReadable = () => {
      const chunk: Buffer | string | null = input.read();
      // `readable` with nothing to read is the end of the input.
      if (chunk === null) return finish(true);
      input.unshift(chunk);
      finish(false);
    };
    // An input that cannot be read serves nobody either.
    const onError = () => finish(true);
    input.on('readable', onReadable);
    input.once('error', onError);
  });
}

/** With no agent on Discord or Slack and no web room (or with --console), the terminal room is the one room. */
export function opensTerminalRoom(config: Config, consoleFlag: boolean): boolean {
  return consoleFlag || (!config.agents.some((a) => a.discord || a.slack) && config.settings.WEB_PORT === undefined);
}

/** The one line: what to set so the bridge has a room to serve. */
export function nothingToServe(config: Config, consoleFlag: boolean): string {
  const first = config.agents[0];
  const name = (first?.name ?? 'data').toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const file = first?.file ?? `${config.settings.AGENTS_DIR}/data.md`;
  const why = consoleFlag
    ? 'Nothing to serve: --console opens only the terminal room, and standard input ended before it got a line.'
    : `Nothing to serve: no agent in ${config.settings.AGENTS_DIR} has Discord or Slack tokens, and standard input ended before the terminal room got a line.`;
  const fix = consoleFlag
    ? 'Run it in a terminal, or without --console to serve the agents on Discord and Slack.'
    : `Add discord: { token_env: DISCORD_TOKEN_${name} } (or slack: { bot_token_env: SLACK_BOT_TOKEN_${name}, app_token_env: SLACK_APP_TOKEN_${name} }) to ${file} and set that variable, or run npm start -- --console in a terminal.`;
  return `${why} ${fix}`;
}
