import { EventSourceParserStream } from 'eventsource-parser/stream';
import { LlmError } from '../errors.js';
import type { AnswerAssembler } from './answer-assembler.js';
import { firstLine, readWireError } from './error-shapes.js';
import { wireLlmError } from './failures.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A whole `chat.completion` body; OpenRouter reports some failures as a 200 with an `error` in it. */
function readCompletion(text: string, answer: AnswerAssembler): void {
  const body = parseJson(text);
  if (body === undefined) {
    throw new LlmError(`the model endpoint sent something that is not an answer: ${firstLine(text).slice(0, 80)}`);
  }
  const wire = readWireError(body);
  if (wire) throw wireLlmError(wire);
  if (!isRecord(body) || !Array.isArray(body.choices) || body.choices.length === 0) {
    throw new LlmError('the model endpoint sent an answer without choices', { retryable: true });
  }
  answer.addCompletion(body);
}

/**
 * Reads an answer into the assembler, whether it came as server-sent events or, from a server that ignores
 * `stream: true`, as one JSON body. Errors sent inside the answer (a 200 body, an `error` event, an error chunk)
 * throw an LlmError. Returns whether the answer was complete: a JSON body, a stream that reached `[DONE]`, or one cut
 * at the answer's output cap.
 */
export async function readAnswer(response: Response, answer: AnswerAssembler): Promise<boolean> {
  if (!response.headers.get('content-type')?.includes('text/event-stream')) {
    readCompletion(await response.text(), answer);
    return true;
  }
  if (!response.body) return false;
  const reader = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (;;) {
      const { done, value: event } = await reader.read();
      if (done) return false;
      const data = event.data.trim();
      if (data === '[DONE]') return true;
      if (!data) continue;
      const chunk = parseJson(data);
      if (event.event === 'error') {
        const message = isRecord(chunk) && typeof chunk.message === 'string' ? chunk.message : data;
        throw wireLlmError(readWireError(chunk) ?? { message });
      }
      if (chunk === undefined) {
        throw new LlmError(`the model endpoint sent unreadable stream data: ${firstLine(data).slice(0, 80)}`);
      }
      const wire = readWireError(chunk);
      if (wire) throw wireLlmError(wire);
      if (isRecord(chunk)) answer.addChunk(chunk);
      // A server that ignores `max_tokens` is read no further than the cap (ending the body ends the stream).
      if (answer.cutAtCap) return true;
    }
  } finally {
    // Ends the body (and the connection's use) when the loop stops early: [DONE], an error, an abort.
    reader.cancel().catch(() => {});
  }
}
