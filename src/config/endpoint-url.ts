/**
 * A model endpoint's base URL (OPENAI_BASE_URL, EMBEDDINGS_BASE_URL, an agent file's `endpoint`), checked when it is
 * read: the two mistakes that pass a plain URL check and then fail every turn say how to fix them.
 */
import { z } from 'zod';
import { redactUrl } from '../secrets.js';

/** What the OpenAI client appends to the base URL itself. */
const CHAT_PATH = /\/chat\/completions\/*$/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const HTTP_SCHEME = /^https?:\/\//i;

/** A host people run model servers on themselves: http, not https (Ollama, llama.cpp, vLLM, LM Studio). */
function looksLocal(url: URL): boolean {
  const host = url.hostname;
  return (
    url.port !== '' ||
    host === 'localhost' ||
    !host.includes('.') ||
    /^\d+(?:\.\d+){3}$/.test(host) ||
    host.startsWith('[')
  );
}

function parses(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** Why `value` cannot be a model endpoint's base URL, with the fix; undefined when it can. */
export function endpointUrlProblem(value: string): string | undefined {
  if (!HTTP_SCHEME.test(value)) {
    if (ANY_SCHEME.test(value)) return 'expected an http:// or https:// URL';
    // `localhost:11434/v1` parses as a URL of scheme "localhost:", and the client then fails every call.
    const guess = parses(`http://${value}`);
    if (!guess?.hostname) return 'Invalid URL';
    const suggestion = looksLocal(guess) ? `http://${value}` : `https://${value}`;
    return `expected a URL that starts with http:// or https://: did you mean ${redactUrl(suggestion)}?`;
  }
  const url = parses(value);
  if (!url?.hostname) return 'Invalid URL';
  if (CHAT_PATH.test(url.pathname)) {
    url.pathname = url.pathname.replace(CHAT_PATH, '');
    const base = url.toString().replace(/\/+$/, '');
    return `the client adds /chat/completions itself: drop it (did you mean ${redactUrl(base)}?)`;
  }
  return undefined;
}

/** The zod schema of such a URL; the message of a refused one names the fix. */
export const endpointUrl = z.string().superRefine((value, context) => {
  const problem = endpointUrlProblem(value);
  if (problem) context.addIssue({ code: 'custom', message: problem });
});
