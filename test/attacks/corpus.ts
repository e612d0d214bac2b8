/**
 * The attack corpus: one YAML file per case under `cases/`, each a recorded input and what must hold of it. A case's
 * `kind` says which runner takes it (`injection`: what a model is shown, test/attacks/injection.test.ts; `access`:
 * who may wake the agents and pair, played through the bridge on a platform's fake, test/attacks/access.test.ts);
 * more kinds (approvals) are added as one more schema in the union below and a runner of their own.
 *
 * In any string, `{{nonce:PLACE}}` is the id the bridge gives the block at PLACE (`message:3:run:0`: message 3's
 * first tool run; `message:2:bot`, `message:2:files`, `message:2:quote:0`) and `{{guess}}` a random id: what an
 * attacker who knew, or guessed, an id would write.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { blockId, freshBlockId } from '../../src/llm/untrusted.js';

const CASES_DIR = path.join(import.meta.dirname, 'cases');

/** One stored message of the room, oldest first (ids 1, 2, … in order). */
const storedMessage = z.strictObject({
  author: z.string(),
  /** The platform's id of the author (a foreign bot's is what the allow list names); default: the author. */
  authorId: z.string().optional(),
  kind: z.enum(['human', 'agent', 'system']).default('human'),
  text: z.string().default(''),
  /** The bridge's lines about uploaded files. */
  files: z.array(z.string()).optional(),
  toolRuns: z.array(z.strictObject({ tool: z.string(), input: z.string(), output: z.string() })).default([]),
});

/** A tool call the agent makes in the turn under test, and what the tool meets. */
const turnCall = z.union([
  z.strictObject({ bash: z.strictObject({ command: z.string(), output: z.string() }) }),
  z.strictObject({ read_files: z.strictObject({ path: z.string(), content: z.string() }) }),
]);

const injection = z.strictObject({
  kind: z.literal('injection'),
  name: z.string(),
  /** The input kind the injection comes through. */
  via: z.enum(['file', 'bash', 'upload', 'bot', 'quote', 'name', 'tool-close', 'nonce-guess']),
  /** The room's platform: foreign bots are Discord's and Slack's. */
  platform: z.enum(['discord', 'slack', 'web', 'console']).default('web'),
  /** Settings for the run, as environment variables (DISCORD_ALLOWED_BOTS…). */
  env: z.record(z.string(), z.string()).default({}),
  conversation: z.array(storedMessage).min(1),
  turn: turnCall.optional(),
  expect: z.strictObject({
    /** Found in what the model is shown, and only inside untrusted blocks. */
    inside: z.array(z.string()).default([]),
    /** The room's people's words: found outside every block. */
    outside: z.array(z.string()).default([]),
    /** Found nowhere in what the model is shown. */
    absent: z.array(z.string()).default([]),
  }),
});

/**
 * One thing a person does on the platform. In texts, `@agent` is a mention of that agent's bot and `{{code:who}}` the
 * pairing code `who` was given in their DM. `calls`: the model calls it must cause (0 unless said).
 */
const accessStep = z.union([
  z.strictObject({
    say: z.strictObject({
      who: z.string(),
      in: z.string().default('general'),
      text: z.string(),
      /** Discord: a reply to the newest message of this agent's bot there. */
      reply: z.string().optional(),
      /** Slack: posted in the thread of the step so labelled. */
      thread: z.string().optional(),
      label: z.string().optional(),
      calls: z.number().int().min(0).default(0),
    }),
  }),
  /** The author of the step so labelled edits it to `text`. */
  z.strictObject({
    edit: z.strictObject({ of: z.string(), text: z.string(), calls: z.number().int().min(0).default(0) }),
  }),
  z.strictObject({
    dm: z.strictObject({
      who: z.string(),
      to: z.string(),
      text: z.string(),
      calls: z.number().int().min(0).default(0),
    }),
  }),
  /** A slash command (through the control agent's bot); its answer must contain `answer`. */
  z.strictObject({
    slash: z.strictObject({
      who: z.string(),
      in: z.string().default('general'),
      command: z.enum(['pair', 'access']),
      args: z.string().default(''),
      answer: z.string(),
    }),
  }),
  /** The bridge's clock moves on. */
  z.strictObject({ later: z.strictObject({ minutes: z.number().positive() }) }),
  /** Discord: the bridge stops; what is said meanwhile is fetched by its catch-up when it starts again (`up`). */
  z.strictObject({ down: z.strictObject({}) }),
  z.strictObject({ up: z.strictObject({ calls: z.number().int().min(0).default(0) }) }),
]);

const access = z.strictObject({
  kind: z.literal('access'),
  name: z.string(),
  /** Which rule of the door it attacks. */
  via: z.enum(['outsider', 'edit', 'reply', 'thread', 'channel', 'pairing', 'dm-policy', 'lookalike']),
  platform: z.enum(['discord', 'slack']).default('discord'),
  /** Agents: the first is the control agent (it answers slash commands and says the room's lines). */
  agents: z.array(z.strictObject({ name: z.string(), activation: z.enum(['always', 'mention']) })).default([
    { name: 'data', activation: 'always' },
    { name: 'code', activation: 'mention' },
  ]),
  /** People by name: those on ACCESS_USERS (empty: everyone), the operators. */
  access_users: z.array(z.string()).default([]),
  operators: z.array(z.string()).default(['otto']),
  /** Other settings, as environment variables (ACCESS_CHANNELS, DM_POLICY…). */
  env: z.record(z.string(), z.string()).default({}),
  steps: z.array(accessStep).min(1),
  expect: z.strictObject({
    /**
     * Every line the bots showed, in any order: where (`general`, `dm:<who>`), to whom when it is meant for one
     * person (Discord names them, Slack shows it to them alone), and a part of its text. Nothing else was shown.
     */
    lines: z.array(z.strictObject({ in: z.string(), to: z.string().optional(), says: z.string() })),
    /** Nothing a person wrote in a DM was stored (it never reached a room). */
    dms_stored: z.boolean().default(false),
  }),
});

export const attackCase = z.discriminatedUnion('kind', [injection, access]);
export type AttackCase = z.infer<typeof attackCase>;
export type InjectionCase = z.infer<typeof injection>;
export type AccessCase = z.infer<typeof access>;
export type AccessStep = z.infer<typeof accessStep>;

function withNonces(value: unknown): unknown {
  if (typeof value === 'string') {
    return value
      .replace(/\{\{nonce:([^}]+)\}\}/g, (_, place: string) => blockId(place))
      .replace(/\{\{guess\}\}/g, () => freshBlockId());
  }
  if (Array.isArray(value)) return value.map(withNonces);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withNonces(inner)]));
  }
  return value;
}

/** Every case, by file name; a file that does not match its schema fails loudly, naming the file. */
export function loadCorpus(): Array<{ file: string; case: AttackCase }> {
  return readdirSync(CASES_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const parsed = attackCase.safeParse(withNonces(parse(readFileSync(path.join(CASES_DIR, file), 'utf8'))));
      if (!parsed.success) throw new Error(`test/attacks/cases/${file}: ${z.prettifyError(parsed.error)}`);
      return { file, case: parsed.data };
    });
}
