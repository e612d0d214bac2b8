/**
 * An MCP tool's input schema, checked before a model sees it, and the names the model calls MCP tools by.
 * A schema a strict OpenAI-compatible server would refuse (not an object schema, a top-level combinator, one ajv
 * cannot compile) is left out with a reason; the arguments of a call are validated against the schema before it
 * is made (ajv, through the SDK's validator).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';

const validator = new AjvJsonSchemaValidator();

/** Checks of arguments: undefined when they fit, else the first problem in a line. */
export type ArgumentCheck = (args: unknown) => string | undefined;

/** Keys OpenAI's strict function calling refuses at the top of a parameters schema. */
const TOP_LEVEL_REFUSED = ['oneOf', 'anyOf', 'allOf', 'not', 'enum'] as const;

/** A schema as large as this is a mistake, not a tool's arguments (and would cost every call its tokens). */
const MAX_SCHEMA_CHARS = 32_000;

/**
 * The schema the model is shown (`$schema` dropped: some servers refuse meta keys), and the check of a call's
 * arguments; or why it is left out.
 */
export function checkedSchema(
  schema: unknown,
): { readonly parameters: Record<string, unknown>; readonly check: ArgumentCheck } | { readonly problem: string } {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema))
    return { problem: 'its inputSchema is no object' };
  const { $schema: _meta, ...rest } = schema as Record<string, unknown>;
  if (rest.type !== 'object') return { problem: 'its inputSchema is not an object schema (type: "object")' };
  const refused = TOP_LEVEL_REFUSED.find((key) => key in rest);
  if (refused) return { problem: `its inputSchema has "${refused}" at the top, which strict model servers refuse` };
  if (rest.properties !== undefined && (typeof rest.properties !== 'object' || Array.isArray(rest.properties))) {
    return { problem: 'its inputSchema has properties that are no object' };
  }
  const text = JSON.stringify(rest);
  if (text.length > MAX_SCHEMA_CHARS) return { problem: `its inputSchema is over ${MAX_SCHEMA_CHARS} characters` };
  let validate: ReturnType<typeof validator.getValidator>;
  try {
    validate = validator.getValidator(rest as JsonSchemaType);
  } catch (error) {
    return { problem: `its inputSchema does not compile: ${(error as Error).message.split('\n')[0]}` };
  }
  const parameters = { ...rest, properties: rest.properties ?? {} };
  return {
    parameters,
    check: (args) => {
      const result = validate(args ?? {});
      return result.valid ? undefined : (result.errorMessage ?? 'the arguments do not fit the tool schema');
    },
  };
}

/** The characters and length a model API allows in a function's name. */
const NAME_MAX = 64;

/**
 * The name the model calls a server's tool by: `server__tool`, other characters as `_`, at most 64 characters, and
 * never one in `taken` (a bridge tool, another tool already named): a clash gets `_2`, `_3`… at its end.
 */
export function toolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const base = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, NAME_MAX);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, NAME_MAX - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}
