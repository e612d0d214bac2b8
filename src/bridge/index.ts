export { defaultLlmFactory, type LlmFactory } from '../llm/llm-factory.js';
export type { BridgeOptions } from './bridge.js';
export { createBridge } from './bridge.js';
export type { Deadline, Scheduler } from './executors/timers.js';
export { Bridge } from './running.js';
