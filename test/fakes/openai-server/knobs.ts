import type { FakeOpenAI, FakeOpenAIOptions, FakeReply } from './types.js';

/*
 * Everything the fake can be asked for beyond a textbook answer (a reply's content and tool calls): each failure,
 * delay, dialect and measurement a reply, the server's options or its controls offer. The records are typed by the
 * fake's own types, so a knob added there must be listed here; test/architecture.test.ts checks that none of them is
 * offered by what ships.
 */
const REPLY_KNOBS: Record<Exclude<keyof FakeReply, 'content' | 'toolCalls'>, true> = {
  agents: true,
  status: true,
  errorMessage: true,
  retryAfter: true,
  delayMs: true,
  chunkDelayMs: true,
  hang: true,
  stallAfterHeaders: true,
  dialect: true,
  reasoning: true,
  reasoningDetails: true,
  refusal: true,
  finishReason: true,
  ignoreStream: true,
  ignoreMaxTokens: true,
  breakOffAfter: true,
  dropConnectionAfter: true,
  streamError: true,
  errorIn200: true,
  noChoices: true,
  emptyStream: true,
  deltas: true,
};

const SERVER_KNOBS: Record<Exclude<keyof FakeOpenAIOptions, 'responder'>, true> = {
  models: true,
  modelOwner: true,
  unsupportedParams: true,
  reasoningModels: true,
  usage: true,
  schema: true,
};

const CONTROLS: Record<Exclude<keyof FakeOpenAI, 'baseURL' | 'close'>, true> = {
  requests: true,
  embeddingRequests: true,
  failEmbeddings: true,
  delayEmbeddings: true,
  respond: true,
  script: true,
};

/** The names of the fake's knobs and controls. */
export const FAKE_KNOBS: readonly string[] = [
  ...Object.keys(REPLY_KNOBS),
  ...Object.keys(SERVER_KNOBS),
  ...Object.keys(CONTROLS),
];
