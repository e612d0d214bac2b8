import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { endpointUrl } from './endpoint-url.js';
import { mcpListSchema } from './mcp-servers.js';

/** Tools an agent may list in `tools:`. */
export const KNOWN_TOOLS = [
  'bash',
  'read_files',
  'write_files',
  'glob',
  'send_channel_message',
  'send_dm',
  'chat_request',
  'chat_response',
  'chat',
  'look',
  'remember',
  'forget',
] as const;
export type ToolName = (typeof KNOWN_TOOLS)[number];

const percent = z.number().min(0).max(100);

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

/**
 * Names an agent may not take, and why: each is already someone in the rooms (the terminal room's person, the
 * bridge's lines, the hand-back to the people) or a platform's ping of everybody.
 */
export const RESERVED_NAMES: Readonly<Record<string, string>> = {
  user: 'the terminal room shows the person typing as [user]',
  human: 'the bridge hands control back to the people as @human',
  system: "the bridge's own lines are [system]",
  everyone: '@everyone pings a whole Discord server',
  here: '@here pings everyone online in a Discord or Slack channel',
};

/** Front matter of an agent file, exactly these keys. */
export const frontMatterSchema = z
  .object({
    // The same characters a mention may hold (src/room/mentions.ts, the adapters' outbound mentions).
    name: z
      .string()
      .regex(/^[\p{L}\p{N}_-]+$/u, 'use only letters (any script), digits, "_" and "-": no spaces, dots or "@"'),
    // A space copied with the name (`"gpt-4o "`) would make every call ask for a model nobody has.
    model: z.string().trim().min(1),
    endpoint: endpointUrl.optional(),
    api_key_env: envName.optional(),
    activation: z.enum(['always', 'mention']).default('mention'),
    tools: z.array(z.string()).default([]),
    temperature: z.number().min(0).max(2).optional(),
    control: z.boolean().optional(),
    context_tokens: z.number().int().min(1024).optional(),
    memory_allocations: z
      .object({ knowledge: percent.optional(), recent_actions: percent.optional(), rooms: percent.optional() })
      .strict()
      .optional(),
    price: z
      .object({ input: z.number().min(0), cached: z.number().min(0).optional(), output: z.number().min(0) })
      .strict()
      .optional(),
    spend_limit_usd_day: z.number().positive().optional(),
    max_output_tokens: z.number().int().min(1).optional(),
    prompts: z
      .object({
        observe: z.string().optional(),
        requested: z.string().optional(),
        direct: z.string().optional(),
      })
      .strict()
      .optional(),
    approvals: z.record(z.string().min(1), z.enum(['off', 'ask', 'deny'])).optional(),
    bash_allow: z.array(z.string().min(1)).optional(),
    bash_deny: z.array(z.string().min(1)).optional(),
    spend_threshold_usd: z.number().positive().optional(),
    mcp: mcpListSchema,
    access: z
      .object({
        users: z.array(z.coerce.string()).optional(),
        roles: z.array(z.coerce.string()).optional(),
        channels: z.array(z.coerce.string()).optional(),
      })
      .strict()
      .optional(),
    discord: z.object({ token_env: envName, control: z.boolean().optional() }).strict().optional(),
    slack: z
      .object({
        bot_token_env: envName,
        app_token_env: envName.optional(),
        signing_secret_env: envName.optional(),
        control: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type FrontMatter = z.output<typeof frontMatterSchema>;

/** Splits `---\nyaml\n---\nbody` and validates the YAML; errors name the file and field. */
export function parseAgentFile(file: string, text: string): { front: FrontMatter; body: string } {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n([\s\S]*))?$/.exec(text);
  if (!match) throw new ConfigError(file, undefined, 'must start with YAML front matter between "---" lines');
  let raw: unknown;
  try {
    raw = parseYaml(match[1] ?? '');
  } catch (error) {
    // The parser counts lines within the front matter; the file has the opening "---" above it.
    const at = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    const problem = ((error as Error).message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(file, undefined, `front matter is not valid YAML: ${problem}`, at ? at + 1 : undefined);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, undefined, 'front matter must be a YAML mapping');
  }
  const parsed = frontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [...(issue?.path ?? []), ...keys.slice(0, 1)].join('.');
    const problem = issue?.code === 'unrecognized_keys' ? 'unknown key' : (issue?.message ?? 'invalid');
    throw new ConfigError(file, path || undefined, problem);
  }
  return { front: parsed.data, body: (match[2] ?? '').trim() };
}
