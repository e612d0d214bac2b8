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
