export { extractMentions, mentionTokens, stripCode } from './mentions.js';
export * from './turns.js';
export type * from './types.js';
export { isAwaiting, shouldWake, type WakeInput } from './wake.js';
