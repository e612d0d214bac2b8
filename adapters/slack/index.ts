import type { Config } from '../../src/config/index.js';
import type { Logger } from '../../src/log.js';
import { SlackAdapter } from './slack-adapter.js';

export { buildManifest } from './manifest.js';
export { SlackAdapter } from './slack-adapter.js';

/** The Slack adapter for every agent with `slack:` keys (main.ts calls this when any agent has them). */
export function createSlackAdapter(options: { config: Config; logger: Logger }): SlackAdapter {
  return new SlackAdapter(options);
}
export { checkSlackTokens } from './token-check.js';
