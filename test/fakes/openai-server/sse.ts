import type { ServerResponse } from 'node:http';
import type { Answer } from './completion.js';

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

/**
 * The `chat.completion.chunk` sequence for an answer: a role delta, content deltas, tool calls as index-keyed
 * deltas (id, type and name first, then arguments in pieces), a final chunk with finish_reason, and a usage
 * chunk with empty choices when the request asked for `stream_options.include_usage`.
 */
export function completionChunks(answer: Answer, includeUsage: boolean): Array<Record<string, unknown>> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const chunks = [chunk({ role: 'assistant', content: answer.toolCalls.length > 0 && !answer.content ? null : '' })];
  for (const piece of contentPieces(answer.content ?? '')) chunks.push(chunk({ content: piece }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of argumentPieces(call.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, answer.finishReason));
  if (includeUsage) {
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

/**
 * Writes the chunks as server-sent events, then `data: [DONE]`. Yields to the event loop between events so they
 * leave as separate writes, and stops quietly if the client goes away mid-stream.
 */
export async function writeEventStream(
  res: ServerResponse,
  chunks: Array<Record<string, unknown>>,
  headers: Record<string, string>,
): Promise<void> {
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const data of chunks) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(data)}\n\n`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (res.destroyed) return;
  res.end('data: [DONE]\n\n');
}
