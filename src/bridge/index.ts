export type { AgentRunRequest, LlmFactory } from './agent-runner.js';
export { defaultLlmFactory } from './agent-runner.js';
export type { BridgeOptions } from './bridge.js';
export { Bridge, createBridge } from './bridge.js';
export { ChannelActor } from './channel-actor.js';
export type { Room } from './rooms.js';
