/**
 * The attribute names spans carry: the GenAI semantic conventions (`gen_ai.*`, still incubating upstream, so copied
 * here as the conventions advise rather than imported from the incubating entry point) and the bridge's own, all
 * under one prefix.
 */
import { type Tracer, trace } from '@opentelemetry/api';

export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  model: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  cachedTokens: 'gen_ai.usage.cache_read.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  agentName: 'gen_ai.agent.name',
} as const;

/** The bridge's attributes: one prefix, so they never collide with a convention's. */
export const RT = 'roundtable';

/** The tracer every span of the bridge comes from (the API's no-op one while no provider is installed). */
export function tracer(): Tracer {
  return trace.getTracer('roundtable');
}
