import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { completionBody, dialectErrorBody, errorBody, resolveAnswer } from './completion.js';
import { DIALECTS } from './dialects.js';
import { base64Embedding, fakeEmbedding } from './embeddings.js';
import { PromptCache } from './prompt-cache.js';
import { completionChunks, deltaChunks, type SseEvent, writeEventStream } from './sse.js';
import type { FakeOpenAI, FakeOpenAIOptions, FakeReply, RecordedRequest, Responder } from './types.js';

const passResponder: Responder = () => ({ content: '[pass]' });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Resolves true after `ms` if the client is still there, false as soon as it disconnects.
 * `ms = Infinity` waits for the disconnect only (a hung request).
 */
function waitUnlessDisconnected(res: ServerResponse, ms: number): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onClose = (): void => {
      if (timer) clearTimeout(timer);
      resolve(false);
    };
    res.once('close', onClose);
    if (Number.isFinite(ms)) {
      timer = setTimeout(() => {
        res.off('close', onClose);
        resolve(!res.destroyed);
      }, ms);
    }
  });
}

/** Wire-level fake of the OpenAI Chat Completions API on 127.0.0.1, for the real `openai` SDK. */
class FakeOpenAIServer implements FakeOpenAI {
  readonly requests: RecordedRequest[] = [];
  private responder: Responder;
  private readonly unsupportedParams: readonly string[];
  private readonly reasoningModels: readonly string[];
  private readonly queues = new Map<string, FakeReply[]>();
  private readonly models = new Set<string>();
  /** The models the server has, when it has a fixed list (`FakeOpenAIOptions.models`). */
  private readonly installed: readonly string[] | undefined;
  private readonly modelOwner: string;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private closing: Promise<void> | undefined;
  private port = 0;
  private responses = 0;
  private readonly cache: PromptCache | undefined;
  readonly embeddingRequests: Array<{ model: string; input: string[] }> = [];
  private embeddingsStatus: number | undefined;
  private embeddingsDelay = 0;

  constructor(options: FakeOpenAIOptions) {
    this.responder = options.responder ?? passResponder;
    this.unsupportedParams = options.unsupportedParams ?? [];
    this.reasoningModels = options.reasoningModels ?? [];
    this.installed = options.models;
    this.modelOwner = options.modelOwner ?? 'roundtable-fake';
    this.cache = options.usage === 'openai' ? new PromptCache(options.schema) : undefined;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => this.fail(res, error));
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  respond(responder: Responder): void {
    this.responder = responder;
  }

  script(model: string, ...replies: FakeReply[]): void {
    this.models.add(model);
    const queue = this.queues.get(model) ?? [];
    queue.push(...replies);
    this.queues.set(model, queue);
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      // Keep-alive and hung connections would hold close() open forever; their pending waits end on 'close'.
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/chat/completions') return this.chatCompletion(req, res);
    if (method === 'POST' && path === '/v1/embeddings') return this.embeddings(req, res);
    if (method === 'GET' && path === '/v1/models') {
      const ids = this.installed ?? [...this.models];
      return this.json(res, 200, { object: 'list', data: ids.map((id) => this.modelObject(id)) });
    }
    // Without a fixed list any model id "exists": the fake answers for every model.
    const modelMatch = method === 'GET' ? /^\/v1\/models\/(.+)$/.exec(path) : null;
    if (modelMatch?.[1]) {
      const id = decodeURIComponent(modelMatch[1]);
      if (!this.has(id)) return this.json(res, 404, errorBody(404, modelMissing(id), 'model_not_found'));
      return this.json(res, 200, this.modelObject(id));
    }
    await readBody(req);
    return this.json(res, 404, errorBody(404, `Unknown request URL: ${method} ${path}.`, 'unknown_url'));
  }

  private async chatCompletion(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return this.json(res, 400, errorBody(400, 'We could not parse the JSON body of your request.'));
    }
    if (!isObject(body)) return this.json(res, 400, errorBody(400, 'The request body must be a JSON object.'));
    if (typeof body.model !== 'string') return this.json(res, 400, errorBody(400, 'You must provide a model.'));
    if (!Array.isArray(body.messages)) {
      return this.json(res, 400, errorBody(400, "Missing required parameter: 'messages'."));
    }

    // OpenAI's wording for a parameter it does not know; servers that copy its API copy that too.
    const unsupported = this.unsupportedParams.find((param) => param in body);
    if (unsupported) {
      this.requests.push(this.record(req, body));
      return this.json(res, 400, errorBody(400, `Unrecognized request argument supplied: ${unsupported}`));
    }

    if (this.reasoningModels.includes(body.model) && 'max_tokens' in body) {
      this.requests.push(this.record(req, body));
      return this.json(res, 400, {
        error: {
          message:
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          type: 'invalid_request_error',
          param: 'max_tokens',
          code: 'unsupported_parameter',
        },
      });
    }

    const request = this.record(req, body);
    const index = this.requests.push(request) - 1;
    if (!this.has(request.model)) {
      return this.json(res, 404, errorBody(404, modelMissing(request.model), 'model_not_found'));
    }
    this.models.add(request.model);

    let reply: FakeReply;
    try {
      reply = this.queues.get(request.model)?.shift() ?? (await this.responder(request, index));
    } catch (error) {
      return this.json(res, 500, errorBody(500, error instanceof Error ? error.message : String(error)));
    }

    if (reply.hang) {
      await waitUnlessDisconnected(res, Number.POSITIVE_INFINITY);
      return;
    }
    if (reply.stallAfterHeaders) {
      // Headers and the start of a body (a JSON object, or one SSE chunk), then nothing.
      res.writeHead(200, {
        ...this.idHeader(),
        'content-type': request.stream ? 'text/event-stream' : 'application/json',
      });
      res.write(request.stream ? `data: ${JSON.stringify(firstChunk(request.model))}\n\n` : '{"id":"chatcmpl-stall",');
      await waitUnlessDisconnected(res, Number.POSITIVE_INFINITY);
      return;
    }
    if (reply.delayMs !== undefined && reply.delayMs > 0) {
      if (!(await waitUnlessDisconnected(res, reply.delayMs))) return;
    }
    const dialect = DIALECTS[reply.dialect ?? 'openai'];
    if (reply.status !== undefined && reply.status >= 400) {
      const headers = reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) };
      const errorAnswer = reply.dialect
        ? dialectErrorBody(dialect, reply.status, reply.errorMessage)
        : errorBody(reply.status, reply.errorMessage);
      return this.json(res, reply.status, errorAnswer, headers);
    }
    if (reply.errorIn200) {
      const { message, code = 502 } = reply.errorIn200;
      return this.json(res, 200, dialect.errorBody(Number(code) || 502, message, 'server_error'));
    }

    const answer = resolveAnswer(reply, request, index, this.cache?.measure(request));
    if (reply.noChoices) return this.json(res, 200, { ...completionBody(answer), choices: [] });
    if (!request.stream || reply.ignoreStream) return this.json(res, 200, completionBody(answer));
    if (reply.emptyStream) return writeEventStream(res, [], this.idHeader());
    const streamOptions = body.stream_options;
    const includeUsage = isObject(streamOptions) && streamOptions.include_usage === true;
    const chunks = reply.deltas ? deltaChunks(answer, reply.deltas) : completionChunks(answer, includeUsage);
    let events: SseEvent[] = chunks.map((data) => ({ data }));
    if (dialect.keepAliveComments) events.unshift({ comment: 'OPENROUTER PROCESSING' });
    if (reply.breakOffAfter !== undefined) {
      return writeEventStream(res, events.slice(0, reply.breakOffAfter), this.idHeader(), 'end');
    }
    if (reply.dropConnectionAfter !== undefined) {
      return writeEventStream(res, events.slice(0, reply.dropConnectionAfter), this.idHeader(), 'drop');
    }
    if (reply.streamError) {
      const { message, code = 500, afterChunks = 2, asEvent = false } = reply.streamError;
      const error: SseEvent = asEvent
        ? { event: 'error', data: { message, code } }
        : { data: dialect.streamError(message, code) };
      events = [...events.slice(0, afterChunks), error];
      return writeEventStream(res, events, this.idHeader(), 'end');
    }
    await writeEventStream(res, events, this.idHeader(), 'done', reply.chunkDelayMs, () => {
      request.firstContentAt = performance.timeOrigin + performance.now();
    });
  }

  private record(req: IncomingMessage, body: Record<string, unknown>): RecordedRequest {
    return {
      model: String(body.model),
      messages: body.messages as RecordedRequest['messages'],
      tools: Array.isArray(body.tools) ? body.tools : undefined,
      stream: body.stream === true,
      url: req.url ?? '/',
      headers: flattenHeaders(req),
      body,
    };
  }

  /** `/v1/embeddings`: one deterministic vector per input (float arrays, or base64 when asked). */
  private async embeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return this.json(res, 400, errorBody(400, 'We could not parse the JSON body of your request.'));
    }
    if (!isObject(body) || typeof body.model !== 'string') {
      return this.json(res, 400, errorBody(400, 'You must provide a model.'));
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((item) => typeof item === 'string')) {
      return this.json(res, 400, errorBody(400, "'input' must be a string or a non-empty array of strings."));
    }
    this.embeddingRequests.push({ model: body.model, input: input as string[] });
    if (this.embeddingsDelay > 0) await new Promise((resolve) => setTimeout(resolve, this.embeddingsDelay));
    if (this.embeddingsStatus !== undefined) {
      return this.json(res, this.embeddingsStatus, errorBody(this.embeddingsStatus));
    }
    const base64 = body.encoding_format === 'base64';
    const data = (input as string[]).map((text, index) => {
      const vector = fakeEmbedding(text);
      return { object: 'embedding', index, embedding: base64 ? base64Embedding(vector) : vector };
    });
    const tokens = (input as string[]).reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
    return this.json(res, 200, {
      object: 'list',
      data,
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  failEmbeddings(status: number | undefined): void {
    this.embeddingsStatus = status;
  }

  delayEmbeddings(ms: number): void {
    this.embeddingsDelay = ms;
  }

  /** Whether the server has the model: any, without a fixed list; else as Ollama resolves `name` to `name:latest`. */
  private has(model: string): boolean {
    if (!this.installed) return true;
    // llama.cpp with one model answers to any name.
    if (this.modelOwner === 'llamacpp' && this.installed.length === 1) return true;
    return this.installed.includes(model) || (!model.includes(':') && this.installed.includes(`${model}:latest`));
  }

  private modelObject(id: string): Record<string, unknown> {
    return { id, object: 'model', created: 0, owned_by: this.modelOwner };
  }

  private idHeader(): Record<string, string> {
    this.responses += 1;
    return { 'x-request-id': `req_fake_${this.responses}` };
  }

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    res.writeHead(status, { ...this.idHeader(), ...headers, 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  // Last resort for a bug in the fake itself: answer 500 if nothing was sent yet, never crash the test process.
  private fail(res: ServerResponse, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (!res.headersSent) this.json(res, 500, errorBody(500, `Fake OpenAI server failed: ${message}`));
    else res.destroy();
  }
}

/** OpenAI's words for a model it does not have (Ollama's say "not found, try pulling it first"). */
function modelMissing(model: string): string {
  return `The model \`${model}\` does not exist or you do not have access to it.`;
}

function firstChunk(model: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-stall',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta: { role: 'assistant', content: 'Thinking' }, finish_reason: null }],
  };
}

/** Starts the fake on an ephemeral 127.0.0.1 port; answers `[pass]` unless scripted or given a responder. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const fake = new FakeOpenAIServer(options);
  await fake.listen();
  return fake;
}
