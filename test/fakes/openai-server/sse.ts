import type { ServerResponse } from 'node:http';
import { type Answer, textPart, thinkingPart } from './completion.js';

/** One server-sent event: JSON data (with an optional event name), or a comment line. */
export type SseEvent = { data: unknown; event?: string } | { comment: string };

// About four characters a piece, leading whitespace kept with the word that follows, like real tokens;
// so even a short reply such as "[pass]" reaches the client in more than one delta.
function contentPieces(content: string): string[] {
  return content.match(/\s*\S{1,4}|\s+$/g) ?? [];
}

function argumentPieces(args: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < args.length; start += 8) pieces.push(args.slice(start, start + 8));
  return pieces;
}

/** The tool-call deltas of one call, in the dialect's way of streaming them. */
function toolCallDeltas(
  answer: Answer,
  call: Answer['toolCalls'][number],
  index: number,
): Array<Record<string, unknown>> {
  const whole = {
    ...call.extra,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  };
  switch (answer.dialect.toolCallDeltas) {
    case 'whole':
      return [{ index, ...whole }];
    case 'whole-same-index':
      return [{ index: 0, ...whole }];
    case 'whole-no-index':
      return [whole];
    case 'pieces':
      return [
        { index, ...call.extra, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ...argumentPieces(call.arguments).map((piece) => ({ index, function: { arguments: piece } })),
      ];
  }
}

/**
 * The `chat.completion.chunk` sequence for an answer: a role delta, reasoning deltas, content (or refusal) deltas,
 * tool calls in the dialect's shape, a final chunk with finish_reason, and a usage chunk with empty choices when the
 * request asked for `stream_options.include_usage` (Groq: `x_groq.usage` on the final chunk instead).
 */
export function completionChunks(answer: Answer, includeUsage: boolean): Array<Record<string, unknown>> {
  const usageChunk = includeUsage && !answer.dialect.usageInXGroq;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(usageChunk ? { usage: null } : {}),
  });
  const chunks = [chunk({ role: 'assistant', content: answer.toolCalls.length > 0 && !answer.content ? null : '' })];
  // Mistral: reasoning and then the reply as content parts, one part a delta.
  const parts = answer.dialect.thinkingParts && answer.reasoning !== undefined;
  for (const piece of contentPieces(answer.reasoning ?? '')) {
    chunks.push(chunk(parts ? { content: [thinkingPart(piece)] } : { [answer.dialect.reasoningField]: piece }));
  }
  answer.reasoningDetails?.forEach((detail, index) => {
    const { text, ...rest } = detail;
    const pieces = typeof text === 'string' ? contentPieces(text) : [];
    chunks.push(chunk({ reasoning_details: [{ ...rest, index, ...(pieces.length > 0 ? { text: pieces[0] } : {}) }] }));
    for (const piece of pieces.slice(1)) {
      chunks.push(chunk({ reasoning_details: [{ type: rest.type, index, text: piece }] }));
    }
  });
  for (const piece of contentPieces(answer.content ?? '')) {
    chunks.push(chunk({ content: parts ? [textPart(piece)] : piece }));
  }
  for (const piece of contentPieces(answer.refusal ?? '')) chunks.push(chunk({ refusal: piece }));
  answer.toolCalls.forEach((call, index) => {
    for (const delta of toolCallDeltas(answer, call, index)) chunks.push(chunk({ tool_calls: [delta] }));
  });
  const last = chunk({}, answer.finishReason);
  if (answer.dialect.usageInXGroq) last.x_groq = { id: `req_${answer.id}`, usage: answer.usage };
  chunks.push(last);
  if (usageChunk) {
    chunks.push({
      id: answer.id,
      object: 'chat.completion.chunk',
      created: answer.created,
      model: answer.model,
      system_fingerprint: null,
      choices: [],
      usage: answer.usage,
    });
  }
  return chunks;
}

/** Chunks carrying the given deltas verbatim, then a chunk with the finish reason. */
export function deltaChunks(answer: Answer, deltas: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  return [...deltas.map((delta) => chunk(delta)), chunk({}, answer.finishReason)];
}

/**
 * Writes the events, then `data: [DONE]` (`end: 'done'`); or ends the response without it (`'end'`, a stream that
 * breaks off), or drops the connection (`'drop'`). Yields to the event loop between events so they leave as separate
 * writes, and stops quietly if the client goes away mid-stream.
 */
export async function writeEventStream(
  res: ServerResponse,
  events: SseEvent[],
  headers: Record<string, string>,
  end: 'done' | 'end' | 'drop' = 'done',
  pauseMs = 0,
  firstContent?: () => void,
): Promise<void> {
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let told = false;
  for (const event of events) {
    if (res.destroyed) return;
    if ('comment' in event) res.write(`: ${event.comment}\n\n`);
    else res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${JSON.stringify(event.data)}\n\n`);
    if (!told && 'data' in event && carriesText(event.data)) {
      told = true;
      firstContent?.();
    }
    await new Promise<void>((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
  }
  if (res.destroyed) return;
  if (end === 'drop') res.socket?.destroy();
  else res.end(end === 'done' ? 'data: [DONE]\n\n' : undefined);
}

/** Whether a chunk carries a piece of the answer's text. */
function carriesText(data: unknown): boolean {
  const delta = (data as { choices?: Array<{ delta?: { content?: unknown } }> } | null)?.choices?.[0]?.delta;
  return typeof delta?.content === 'string' && delta.content !== '';
}
