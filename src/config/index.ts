export type { ToolName } from './agent-file.js';
export { KNOWN_TOOLS } from './agent-file.js';
export { templateDir } from './folders.js';
export type { AgentConfig, Config } from './load.js';
export { environmentWithDotenv, loadConfig } from './load.js';
export type { Env, Settings } from './settings.js';
export { readSettings, SETTING_NAMES } from './settings.js';
