/** What a span may say of content (TRACE_CONTENT=on only), redacted like the log and bounded in size. */
import { type Context, trace } from '@opentelemetry/api';
import { redact } from '../secrets.js';

let content = false;

/** TRACE_CONTENT=on: spans carry message text, prompts, replies and tool input and output (redacted like the log). */
export function setTraceContent(on: boolean): void {
  content = on;
}

export function tracesContent(): boolean {
  return content;
}

/** The most characters of one content attribute (a tool's output can be megabytes). */
const MAX_CHARS = 16_384;

/** `text`, redacted and cut, when content is traced; undefined otherwise. */
export function contentOf(text: string | undefined): string | undefined {
  if (!tracesContent() || text === undefined) return undefined;
  const clean = redact(text);
  return clean.length > MAX_CHARS ? `${clean.slice(0, MAX_CHARS)}… (${clean.length} characters)` : clean;
}

/** The prompt of a turn's model call, on the turn's span (`turn`: its context), when content is traced. */
export function tracePrompt(messages: readonly unknown[], turn: Context | undefined): void {
  if (!tracesContent() || turn === undefined) return;
  const span = trace.getSpan(turn);
  const text = span?.isRecording() ? contentOf(JSON.stringify(messages)) : undefined;
  if (span && text !== undefined) span.setAttribute('gen_ai.input.messages', text);
}
