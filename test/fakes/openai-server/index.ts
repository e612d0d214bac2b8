/** The tests use the demo's local model (src/demo/local-model): one OpenAI-compatible fake for both. */
export * from '../../../src/demo/local-model/index.js';
