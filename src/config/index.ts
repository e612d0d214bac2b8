export type { ToolName } from './agent-file.js';
export { KNOWN_TOOLS } from './agent-file.js';
export { dockerEngine, type EngineConnection, type EngineTls } from './docker-engine.js';
export { templateDir } from './folders.js';
export type { AgentConfig, Allocations, Config, Price, PricedSettings, Unpriced } from './load.js';
export { DEFAULT_ALLOCATIONS, environmentWithDotenv, loadConfig, unpricedUnderSharedLimit } from './load.js';
export type { HttpServer, McpServerConfig, StdioServer } from './mcp-servers.js';
export type { Env, Settings } from './settings.js';
export { readSettings, replicaId, SETTING_NAMES } from './settings.js';
