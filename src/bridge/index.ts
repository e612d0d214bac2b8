export type { AgentRunRequest, LlmFactory } from './agent-runner.js';
export { defaultLlmFactory } from './agent-runner.js';
export type { BridgeOptions } from './bridge.js';
export { Bridge, createBridge } from './bridge.js';
export type { Deadline, Scheduler } from './timers.js';
