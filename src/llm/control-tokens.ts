/**
 * Chat-template control tokens, taken out of every text the bridge passes to a model. A server that renders the chat
 * template and tokenizes the result with special tokens parsed (llama.cpp, Ollama and vLLM setups often do) reads a
 * literal `<|im_end|>` in a message as the real token: a file or a name holding one can end the user's turn and open
 * a system or assistant turn of its own. Removing them costs a reader nothing: no person writes them to be read.
 */

/** The families covered, each with the tokens it is known by (docs/trust.md lists them, a test takes each). */
export const CONTROL_TOKEN_FAMILIES = {
  /** ChatML (Qwen, Yi, Hermes, many fine-tunes), Phi-4's separator, GPT's end of text and fill-in-the-middle. */
  chatml: ['<|im_start|>', '<|im_end|>', '<|im_sep|>', '<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>'],
  /** Llama 3: headers, end of turn and message, the Python tag, reserved tokens. */
  llama3: [
    '<|begin_of_text|>',
    '<|end_of_text|>',
    '<|start_header_id|>',
    '<|end_header_id|>',
    '<|eot_id|>',
    '<|eom_id|>',
    '<|python_tag|>',
    '<|reserved_special_token_7|>',
  ],
  /** Llama 2 and Mistral: instructions, system blocks, sentence bounds, Mistral's tool and system markers. */
  mistral: [
    '[INST]',
    '[/INST]',
    '<<SYS>>',
    '<</SYS>>',
    '<s>',
    '</s>',
    '<unk>',
    '[TOOL_CALLS]',
    '[AVAILABLE_TOOLS]',
    '[/AVAILABLE_TOOLS]',
    '[TOOL_RESULTS]',
    '[/TOOL_RESULTS]',
    '[SYSTEM_PROMPT]',
    '[/SYSTEM_PROMPT]',
  ],
  /** Harmony (gpt-oss): message, channel, constrain, return and call markers. */
  harmony: ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>', '<|return|>', '<|call|>'],
  /** Gemma 2 and 3 (`<start_of_turn>`), Gemma 4's one-sided markers (`<|turn>`, `<turn|>`). */
  gemma: ['<start_of_turn>', '<end_of_turn>', '<bos>', '<eos>', '<|turn>', '<turn|>', '<|channel>', '<channel|>'],
  /** Phi-3's roles, Command R's turn tokens, Granite's roles: all `<|…|>`. */
  roles: [
    '<|system|>',
    '<|user|>',
    '<|assistant|>',
    '<|START_OF_TURN_TOKEN|>',
    '<|END_OF_TURN_TOKEN|>',
    '<|CHATBOT_TOKEN|>',
    '<|start_of_role|>',
    '<|end_of_role|>',
  ],
  /** DeepSeek's, written with full-width bars and `▁`. */
  deepseek: [
    '<｜begin▁of▁sentence｜>',
    '<｜end▁of▁sentence｜>',
    '<｜User｜>',
    '<｜Assistant｜>',
    '<｜tool▁calls▁begin｜>',
  ],
  /** Tool-call and reasoning tags that Qwen, Hermes and DeepSeek tokenizers hold as single added tokens. */
  tags: ['<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>'],
} as const;

const NAME = '[A-Za-z0-9_.:-]{1,48}';

/**
 * Every form above, and their kin by shape: any `<|name|>`, `<|name>` or `<name|>` (the families add tokens of these
 * shapes with every release), DeepSeek's `<｜…｜>`, Mistral's bracketed markers, Llama 2's, Gemma's and the tags.
 */
const CONTROL_TOKEN = new RegExp(
  [
    `<\\|${NAME}\\|?>`,
    `<${NAME}\\|>`,
    '<｜[^｜<>\\n]{1,48}｜>',
    '\\[\\/?(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CONTENT|THINK|IMG|IMG_BREAK|IMG_END)\\]',
    '<<\\/?SYS>>',
    '<\\/?s>',
    '<unk>',
    '<(?:bos|eos|pad|start_of_turn|end_of_turn|start_of_image|end_of_image)>',
    '<\\/?(?:tool_call|tool_response|think)>',
  ].join('|'),
  'gi',
);

/**
 * `text` without chat-template control tokens. Taken out until none is left, so that two halves around a removed one
 * (`<|im_<|im_end|>start|>`) do not join into a new one.
 */
export function stripControlTokens(text: string): string {
  let current = text;
  for (;;) {
    const next = current.replace(CONTROL_TOKEN, '');
    if (next === current) return current;
    current = next;
  }
}

/** A message's text parts without control tokens: its content, and the arguments of the tool calls it replays. */
function messageWithoutControlTokens<M extends { content?: unknown; tool_calls?: unknown }>(message: M): M {
  let next = message;
  const { content } = message;
  if (typeof content === 'string') {
    const clean = stripControlTokens(content);
    if (clean !== content) next = { ...next, content: clean };
  } else if (Array.isArray(content)) {
    next = {
      ...next,
      content: content.map((part: unknown) =>
        part && typeof part === 'object' && 'text' in part && typeof part.text === 'string'
          ? { ...part, text: stripControlTokens(part.text) }
          : part,
      ),
    };
  }
  if (Array.isArray(message.tool_calls)) {
    next = {
      ...next,
      tool_calls: message.tool_calls.map((call: unknown) => {
        if (!call || typeof call !== 'object' || !('function' in call)) return call;
        const fn = call.function;
        if (!fn || typeof fn !== 'object' || !('arguments' in fn) || typeof fn.arguments !== 'string') return call;
        return { ...call, function: { ...fn, arguments: stripControlTokens(fn.arguments) } };
      }),
    };
  }
  return next;
}

/** A request's messages as they leave for the model: every text without control tokens (the last guard). */
export function messagesWithoutControlTokens<M extends { content?: unknown; tool_calls?: unknown }>(
  messages: readonly M[],
): M[] {
  return messages.map(messageWithoutControlTokens);
}
