// Markup that some model servers leave in the text when they run without a reasoning or tool parser:
// `<think>` blocks (deepseek-r1 and Qwen3 on Ollama, llama.cpp, vLLM) and Hermes-style `<tool_call>` blocks.

const THINK = '<think>';
const THINK_END = '</think>';
const TOOL_CALL = '<tool_call>';
const TOOL_CALL_END = '</tool_call>';

export interface SplitText {
  /** The text without reasoning. */
  readonly said: string;
  /** The reasoning, blocks joined by a blank line. */
  readonly reasoning: string;
}

/**
 * Takes `<think>…</think>` blocks out of a text. An unclosed `<think>` holds everything after it; a `</think>` with no
 * opening (a chat template that opens the block in the prompt) makes everything before it reasoning.
 */
export function splitThinking(raw: string): SplitText {
  const reasoning: string[] = [];
  let rest = raw;
  const firstEnd = rest.indexOf(THINK_END);
  const firstOpen = rest.indexOf(THINK);
  if (firstEnd !== -1 && (firstOpen === -1 || firstEnd < firstOpen)) {
    reasoning.push(rest.slice(0, firstEnd));
    rest = rest.slice(firstEnd + THINK_END.length);
  }
  let said = '';
  for (;;) {
    const open = rest.indexOf(THINK);
    if (open === -1) {
      said += rest;
      break;
    }
    said += rest.slice(0, open);
    const end = rest.indexOf(THINK_END, open + THINK.length);
    if (end === -1) {
      reasoning.push(rest.slice(open + THINK.length));
      break;
    }
    reasoning.push(rest.slice(open + THINK.length, end));
    rest = rest.slice(end + THINK_END.length);
  }
  const thought = reasoning.map((part) => part.trim()).filter(Boolean);
  // The blank lines that followed a block are layout, not part of the reply.
  return { said: reasoning.length > 0 ? said.trim() : said, reasoning: thought.join('\n\n') };
}

export interface MarkupCall {
  readonly name: string;
  readonly arguments: string;
}

/**
 * Hermes / Qwen chat templates on a server without a tool parser write a tool call as
 * `<tool_call>{"name": "...", "arguments": {...}}</tool_call>` in the text. Each readable block becomes a call and
 * leaves the text; a block that is not such JSON stays as it was.
 */
export function extractToolCallMarkup(text: string): { text: string; calls: MarkupCall[] } {
  const calls: MarkupCall[] = [];
  const rest = text.replace(/<tool_call>([\s\S]*?)<\/tool_call>/g, (block, json: string) => {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return block;
    }
    if (!value || typeof value !== 'object') return block;
    const {
      name,
      arguments: args,
      parameters,
    } = value as { name?: unknown; arguments?: unknown; parameters?: unknown };
    if (typeof name !== 'string' || !name) return block;
    const given = args ?? parameters ?? {};
    calls.push({ name, arguments: typeof given === 'string' ? given : JSON.stringify(given) });
    return '';
  });
  return { text: calls.length > 0 ? rest.trim() : text, calls };
}

/** Drops the end of a text that may be the start of one of the tags (`<thi`), until the next piece tells. */
function withoutPartialTag(text: string): string {
  for (const tag of [THINK, TOOL_CALL]) {
    for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
      if (text.endsWith(tag.slice(0, length))) return text.slice(0, text.length - length);
    }
  }
  return text;
}

/** What a preview may show of a text still arriving: no reasoning, no tool-call markup, no half-written tag. */
export function previewText(raw: string): string {
  let text = splitThinking(raw).said;
  for (let open = text.indexOf(TOOL_CALL); open !== -1; open = text.indexOf(TOOL_CALL)) {
    const end = text.indexOf(TOOL_CALL_END, open);
    text = end === -1 ? text.slice(0, open) : text.slice(0, open) + text.slice(end + TOOL_CALL_END.length);
  }
  return withoutPartialTag(text).trimStart();
}
