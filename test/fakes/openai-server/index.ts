/**
 * A wire-level fake of an OpenAI-compatible model server for the tests and benchmarks, driven by the real `openai`
 * SDK over 127.0.0.1: scripted replies, recorded requests, the dialects of real servers, their errors, hangs and
 * broken streams, usage modes and prompt-cache accounting, embeddings. None of it ships (the demo has its own small
 * model, src/demo/local-model.ts).
 */
export { type AgentView, agentOfRequest, batchAgentsOf, batchParts, perAgent } from './agents.js';
export { FAKE_EMBEDDING_DIMENSIONS, fakeEmbedding } from './embeddings.js';
export { PromptCache, promptText, repeatedPrefixShare, type SchemaPlacement } from './prompt-cache.js';
export { startFakeOpenAI } from './server.js';
export type {
  Dialect,
  FakeOpenAI,
  FakeOpenAIOptions,
  FakeReply,
  FakeToolCall,
  RecordedRequest,
  Responder,
} from './types.js';
