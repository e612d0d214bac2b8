import { z } from 'zod';
import { defineTool, ok, refused } from './tool.js';

/** An entry's key and value: short enough that knowledge stays a list of facts, not a file store. */
export const KEY_LIMIT = 100;
export const VALUE_LIMIT = 2000;
/** Entries per agent and room; the context shows what fits its knowledge allocation. */
export const KNOWLEDGE_LIMIT = 200;

const KEY_ERROR = `"key" must be 1 to ${KEY_LIMIT} characters`;

/** `remember`: keeps a fact under a key (replacing what was there); it is in the agent's context from then on. */
export const rememberTool = defineTool({
  name: 'remember',
  description:
    'Keep a fact for later under a short key (it replaces an earlier value). What you remember is shown to you ' +
    'in every later turn in this room, also after a restart; what you remember in a DM or a private exchange is ' +
    'shown only there.',
  schema: z.object({
    key: z.string({ error: KEY_ERROR }).trim().min(1, { error: KEY_ERROR }).max(KEY_LIMIT, { error: KEY_ERROR }),
    value: z
      .string({ error: '"value" must be text' })
      .min(1, { error: '"value" must not be empty (use forget to drop a key)' })
      .max(VALUE_LIMIT, { error: `"value" must be at most ${VALUE_LIMIT} characters` }),
  }),
  inputOf: (args) => String((args as { key?: unknown } | null)?.key ?? ''),
  async run({ key, value }, context) {
    const memory = context.memory;
    if (!memory) return refused(key, 'memory is not available here');
    if (!(await memory.has(key)) && (await memory.count()) >= KNOWLEDGE_LIMIT) {
      return refused(key, `you already remember ${KNOWLEDGE_LIMIT} things here; forget one first`);
    }
    await memory.remember(key, value);
    return ok(key, `Remembered "${key}".`);
  },
});

/** `forget`: drops a key. */
export const forgetTool = defineTool({
  name: 'forget',
  description: 'Forget what you remembered under a key.',
  schema: z.object({
    key: z.string({ error: KEY_ERROR }).trim().min(1, { error: KEY_ERROR }).max(KEY_LIMIT, { error: KEY_ERROR }),
  }),
  inputOf: (args) => String((args as { key?: unknown } | null)?.key ?? ''),
  async run({ key }, context) {
    const memory = context.memory;
    if (!memory) return refused(key, 'memory is not available here');
    return (await memory.forget(key))
      ? ok(key, `Forgot "${key}".`)
      : refused(key, `you remember nothing under "${key}"`);
  },
});

export const memoryTools = [rememberTool, forgetTool] as const;
