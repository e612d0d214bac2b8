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
