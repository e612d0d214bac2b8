/**
 * The demo's bundled model: an OpenAI-compatible server on 127.0.0.1 that answers each chat completion with what the
 * demo's script says, as one JSON completion or, when asked, a stream of chunks (`npm run demo` plays its example
 * session on it, without an API key). It speaks the textbook shapes only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A chat completion request, as the script reads it. */
export interface ScriptRequest {
  readonly model: string;
  readonly messages: ReadonlyArray<{ role: string; content?: unknown }>;
}

/** What the model answers: text, or tool calls (with their arguments). */
export interface ScriptReply {
  readonly content?: string;
  readonly toolCalls?: Array<{ readonly name: string; readonly arguments: Record<string, unknown> }>;
}

export type Script = (request: ScriptRequest) => ScriptReply;

export interface LocalModel {
  /** 'http://127.0.0.1:PORT/v1', for OPENAI_BASE_URL. */
  readonly baseURL: string;
  /** Closes the server and its open connections. */
  close(): Promise<void>;
}

/** A reply as wire values: one `chat.completion` choice and its usage. */
interface Answer {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly content: string | null;
  readonly toolCalls: ReadonlyArray<{ id: string; name: string; arguments: string }>;
  readonly finishReason: 'stop' | 'tool_calls';
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Starts the model on an ephemeral port of 127.0.0.1. */
export async function startLocalModel(script: Script): Promise<LocalModel> {
  let answered = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    answer(req, res, script, answered++).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) sendJson(res, 500, errorBody(message, 'server_error'));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, script: Script, index: number): Promise<void> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const path = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '');
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    return sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${path}.`));
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
  } catch {
    return sendJson(res, 400, errorBody('We could not parse the JSON body of your request.'));
  }
  if (typeof body?.model !== 'string' || !Array.isArray(body.messages)) {
    return sendJson(res, 400, errorBody('A chat completion needs a model and messages.'));
  }
  const request: ScriptRequest = { model: body.model, messages: body.messages as ScriptRequest['messages'] };
  const reply = toAnswer(script(request), request, index);
  if (body.stream !== true) return sendJson(res, 200, completion(reply));
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  await sendStream(res, chunks(reply, options?.include_usage === true));
}

function toAnswer(reply: ScriptReply, request: ScriptRequest, index: number): Answer {
  const toolCalls = (reply.toolCalls ?? []).map((call, position) => ({
    id: `call_${index}_${position}`,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  }));
  // OpenAI sends `content: null` on a turn of tool calls only.
  const content = toolCalls.length > 0 && !reply.content ? null : (reply.content ?? '');
  // About four characters a token: usage for the room's /status, not a count.
  const tokens = (text: string) => Math.ceil(text.length / 4);
  const prompt = tokens(JSON.stringify(request.messages));
  const completionTokens = tokens((content ?? '') + toolCalls.map((call) => call.name + call.arguments).join(''));
  return {
    id: `chatcmpl-demo-${index}`,
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    content,
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
  };
}

function toolCallObjects(answer: Answer) {
  return answer.toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}

function completion(answer: Answer): Record<string, unknown> {
  const message = {
    role: 'assistant',
    content: answer.content,
    refusal: null,
    ...(answer.toolCalls.length > 0 ? { tool_calls: toolCallObjects(answer) } : {}),
  };
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage: answer.usage,
  };
}

/** The stream of a reply: its text in pieces, each tool call whole, the finish reason, and usage when asked. */
function chunks(answer: Answer, includeUsage: boolean): Array<Record<string, unknown>> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const stream = [chunk({ role: 'assistant', content: answer.content === null ? null : '' })];
  for (const piece of answer.content?.match(/\s*\S{1,4}|\s+$/g) ?? []) stream.push(chunk({ content: piece }));
  toolCallObjects(answer).forEach((call, index) => {
    stream.push(chunk({ tool_calls: [{ index, ...call }] }));
  });
  stream.push(chunk({}, answer.finishReason));
  if (includeUsage) stream.push({ ...chunk({}), choices: [], usage: answer.usage });
  return stream;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function sendStream(res: ServerResponse, events: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

function errorBody(message: string, type = 'invalid_request_error'): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}
