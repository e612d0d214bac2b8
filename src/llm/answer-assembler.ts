import { randomBytes } from 'node:crypto';
import type { OutputCap } from './output-cap.js';
import { extractToolCallMarkup, previewText, splitThinking } from './reply-markup.js';
import type { LlmResponse, LlmToolCall } from './types.js';
import { type LlmUsage, readUsage } from './usage.js';

export const CUT_OFF_NOTE = '\n\n[cut off: the model reached its output limit]';

type Fields = Record<string, unknown>;

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge for provider objects that may arrive in pieces (Gemini's `extra_content`); later values win. */
function merge(into: unknown, value: unknown): unknown {
  if (!isRecord(into) || !isRecord(value)) return value;
  const merged: Fields = { ...into };
  for (const [key, item] of Object.entries(value)) merged[key] = merge(merged[key], item);
  return merged;
}

interface CallDraft {
  id: string;
  name: string;
  arguments: string;
  carry: Fields;
}

// Keys of a tool call the client reads itself; any other key is the provider's and goes back as it came.
const TOOL_CALL_KEYS = new Set(['index', 'id', 'type', 'function']);
// Reasoning pieces of OpenRouter's `reasoning_details` whose text arrives in several deltas.
const DETAIL_TEXT_KEYS = ['text', 'summary', 'data'];

/**
 * Builds one LlmResponse from what a server sent: the deltas of a stream, or the message of a whole completion (read
 * as a single delta). Real servers differ in how they stream tool calls, where they put reasoning and usage; the
 * rules here take each documented shape.
 */
export class AnswerAssembler {
  private content = '';
  private refusal = '';
  private reasoningContent = '';
  private reasoningText = '';
  /** Mistral's `thinking` content parts. */
  private thinking = '';
  private readonly reasoningDetails: Fields[] = [];
  private extraContent: unknown;
  private readonly calls: CallDraft[] = [];
  private readonly byIndex = new Map<number, CallDraft>();
  private finish: string | undefined;
  private usage: LlmUsage | undefined;
  private shown = '';

  constructor(
    private readonly onText?: (textSoFar: string) => void,
    /** The output cap held as the answer arrives (a server may ignore `max_tokens`). */
    private readonly cap?: OutputCap,
  ) {}

  /** True once the answer reached its output cap here: what came after was dropped, and nothing more is read. */
  get cutAtCap(): boolean {
    return this.cap?.cut ?? false;
  }

  /** True once anything of an answer arrived: text, reasoning, a refusal, a tool call or a finish reason. */
  hasStarted(): boolean {
    return Boolean(
      this.content ||
        this.refusal ||
        this.reasoningContent ||
        this.reasoningText ||
        this.thinking ||
        this.calls.length ||
        this.finish,
    );
  }

  get finishReason(): string | undefined {
    return this.finish;
  }

  /** One `chat.completion.chunk`. */
  addChunk(chunk: Fields): void {
    // Groq reports a stream's usage under `x_groq`; everyone else in `usage`, mostly on a last chunk with no choices.
    this.usage =
      readUsage(chunk.usage) ?? readUsage(isRecord(chunk.x_groq) ? chunk.x_groq.usage : undefined) ?? this.usage;
    const choice = firstChoice(chunk.choices);
    if (!choice) return;
    if (isRecord(choice.delta)) this.addDelta(choice.delta);
    this.finishWith(choice.finish_reason);
  }

  /** A whole `chat.completion` (also what a server that ignores `stream: true` sends). */
  addCompletion(body: Fields): void {
    this.usage = readUsage(body.usage) ?? this.usage;
    const choice = firstChoice(body.choices);
    if (!choice) return;
    if (isRecord(choice.message)) this.addDelta(choice.message);
    this.finishWith(choice.finish_reason);
  }

  private finishWith(reason: unknown): void {
    if (this.cutAtCap) this.finish = 'length';
    else if (typeof reason === 'string' && reason) this.finish = reason;
  }

  /** The part of what the model wrote that fits its output cap. */
  private admit(piece: string): string {
    return this.cap ? this.cap.admit(piece) : piece;
  }

  private addDelta(delta: Fields): void {
    if (this.cutAtCap) return;
    if (typeof delta.refusal === 'string') this.refusal += this.admit(delta.refusal);
    // DeepSeek, llama.cpp, LM Studio and older vLLM say `reasoning_content`; Ollama, OpenRouter, Groq and newer vLLM
    // say `reasoning` (some send both with the same text, so they are kept apart, and counted once).
    const reasoningContent = typeof delta.reasoning_content === 'string' ? this.admit(delta.reasoning_content) : '';
    this.reasoningContent += reasoningContent;
    if (typeof delta.reasoning === 'string') {
      this.reasoningText +=
        delta.reasoning === delta.reasoning_content ? reasoningContent : this.admit(delta.reasoning);
    }
    if (Array.isArray(delta.reasoning_details)) for (const detail of delta.reasoning_details) this.addDetail(detail);
    if (delta.extra_content !== undefined) this.extraContent = merge(this.extraContent, delta.extra_content);
    if (Array.isArray(delta.tool_calls))
      for (const part of delta.tool_calls) if (isRecord(part)) this.addToolCall(part);
    const parts = contentParts(delta.content);
    this.thinking += this.admit(parts.thinking);
    const text = this.admit(parts.text);
    if (text) {
      this.content += text;
      const preview = previewText(this.content);
      if (preview !== this.shown) {
        this.shown = preview;
        this.onText?.(preview);
      }
    }
  }

  private addDetail(detail: unknown): void {
    if (!isRecord(detail)) return;
    const same =
      typeof detail.index === 'number'
        ? this.reasoningDetails.find((d) => d.index === detail.index && d.type === detail.type)
        : undefined;
    if (!same) {
      this.reasoningDetails.push({ ...detail });
      return;
    }
    for (const [key, value] of Object.entries(detail)) {
      const before = same[key];
      same[key] =
        DETAIL_TEXT_KEYS.includes(key) && typeof before === 'string' && typeof value === 'string'
          ? before + value
          : value;
    }
  }

  /**
   * OpenAI keys streamed calls by `index` alone; Ollama and LiteLLM send `index: 0` for every call, Gemini and older
   * Ollama send no index, several servers send a whole call in one delta. So: a new `id` starts a new call; a delta
   * without one continues the call last seen at its index, or with no index, the last call.
   */
  private addToolCall(part: Fields): void {
    const id = typeof part.id === 'string' && part.id ? part.id : undefined;
    const index = typeof part.index === 'number' ? part.index : undefined;
    let call = id
      ? this.calls.find((c) => c.id === id)
      : index !== undefined
        ? this.byIndex.get(index)
        : this.calls.at(-1);
    if (!call) {
      call = { id: id ?? '', name: '', arguments: '', carry: {} };
      this.calls.push(call);
    }
    if (index !== undefined) this.byIndex.set(index, call);
    const fn = isRecord(part.function) ? part.function : {};
    // Some servers repeat the whole name in every delta: only a different piece is appended.
    if (typeof fn.name === 'string' && fn.name && fn.name !== call.name) call.name += this.admit(fn.name);
    if (typeof fn.arguments === 'string') call.arguments += this.admit(fn.arguments);
    else if (isRecord(fn.arguments)) call.arguments += this.admit(JSON.stringify(fn.arguments));
    for (const [key, value] of Object.entries(part)) {
      if (!TOOL_CALL_KEYS.has(key)) call.carry[key] = merge(call.carry[key], value);
    }
  }

  /** The answer; `toolsOffered` allows tool calls written as `<tool_call>` markup in the text. */
  result(toolsOffered: boolean): LlmResponse {
    const { said, reasoning: thought } = splitThinking(this.content);
    const markup = toolsOffered ? extractToolCallMarkup(said) : { text: said, calls: [] };
    const toolCalls: LlmToolCall[] = [
      ...this.calls.map((call) => ({
        id: call.id || newCallId(),
        name: call.name,
        arguments: call.arguments,
        ...(Object.keys(call.carry).length > 0 ? { carry: call.carry } : {}),
      })),
      ...markup.calls.map((call) => ({ id: newCallId(), ...call })),
    ];
    const reasoning = [this.reasoningContent || this.reasoningText, this.thinking, thought]
      .filter((part) => part.trim())
      .join('\n\n');
    let content = markup.text.trim() ? markup.text : this.refusal;
    // A cut-off answer says so; one cut off while still reasoning is left empty, for the caller to call it that.
    if (this.finish === 'length' && toolCalls.length === 0 && (content.trim() || !reasoning)) {
      content = content.trim() ? content + CUT_OFF_NOTE : CUT_OFF_NOTE.trim();
    }
    const carry: Fields = {};
    if (this.reasoningContent) carry.reasoning_content = this.reasoningContent;
    if (this.reasoningText) carry.reasoning = this.reasoningText;
    if (this.reasoningDetails.length > 0) carry.reasoning_details = this.reasoningDetails;
    if (this.extraContent !== undefined) carry.extra_content = this.extraContent;
    // A server that ignored the cap reports what it wrote: what was kept is what fits the cap.
    const cap = this.cap;
    const overrun = cap?.cut && this.usage && this.usage.output > cap.tokens ? this.usage.output : undefined;
    const usage = overrun !== undefined && this.usage && cap ? { ...this.usage, output: cap.tokens } : this.usage;
    return {
      content,
      toolCalls,
      ...(usage ? { usage } : {}),
      ...(cap?.cut ? { cutAtCap: true } : {}),
      ...(overrun !== undefined ? { outputOverrun: overrun } : {}),
      ...(reasoning ? { reasoning } : {}),
      ...(this.finish ? { finishReason: this.finish } : {}),
      ...(Object.keys(carry).length > 0 ? { carry } : {}),
    };
  }
}

/**
 * A message's (or delta's) `content`: a string, or a list of parts. Mistral's reasoning models send
 * `[{type: "thinking", thinking: [{type: "text", text}]}, {type: "text", text}]`, in a whole answer and in stream
 * deltas alike: text parts are the reply, thinking parts are reasoning like `<think>`; other parts (references,
 * images) hold nothing to post.
 */
export function contentParts(content: unknown): { text: string; thinking: string } {
  if (typeof content === 'string') return { text: content, thinking: '' };
  if (!Array.isArray(content)) return { text: '', thinking: '' };
  let text = '';
  let thinking = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (!isRecord(part)) continue;
    else if (part.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'thinking') thinking += contentParts(part.thinking).text;
  }
  return { text, thinking };
}

function firstChoice(choices: unknown): Fields | undefined {
  if (!Array.isArray(choices)) return undefined;
  const first = choices.find((choice) => isRecord(choice) && (choice.index ?? 0) === 0) ?? choices[0];
  return isRecord(first) ? first : undefined;
}

function newCallId(): string {
  return `call_${randomBytes(9).toString('base64url')}`;
}
