/**
 * Operators' MCP tokens: `rtmcp_<id>_<secret>`, the id 12 hex digits (how the store finds the token), the secret 256
 * random bits. The store keeps the id and the secret's SHA-256 digest only; a presented secret is checked against it
 * in constant time. Holding a token is being its operator on the MCP endpoint until it is revoked.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PeoplePort, WebIdentity } from '../store/port.js';

const TOKEN = /^rtmcp_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewToken {
  /** What the operator gives their MCP client (shown once). */
  readonly token: string;
  readonly id: string;
  readonly secretHash: string;
}

/** A fresh token, with what the store keeps of it. */
export function newToken(): NewToken {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { token: `rtmcp_${id}_${secret}`, id, secretHash: sha256(secret) };
}

/** A token's id and secret; undefined when the text is not shaped like a token at all. */
export function parseToken(text: string): { id: string; secret: string } | undefined {
  const match = TOKEN.exec(text);
  return match ? { id: match[1] ?? '', secret: match[2] ?? '' } : undefined;
}

/** Whether `text` is shaped like an MCP token (else it may be a web session's token). */
export function looksLikeToken(text: string): boolean {
  return TOKEN.test(text);
}

/** The person a token belongs to, as the store has them now; undefined for an unknown, revoked or wrong token. */
export async function tokenPerson(people: PeoplePort, text: string, now: number): Promise<WebIdentity | undefined> {
  const parsed = parseToken(text);
  if (!parsed) return undefined;
  const stored = await people.token(parsed.id, now);
  // The digest compared in constant time (a wrong secret for a known id tells nothing by how long it took).
  const given = Buffer.from(sha256(parsed.secret), 'hex');
  const kept = Buffer.from(stored?.secretHash ?? '0'.repeat(64), 'hex');
  const same = given.length === kept.length && timingSafeEqual(given, kept);
  return stored && same ? stored.person : undefined;
}

/** Makes a token for a web room operator; refuses anyone else (with the line to tell). */
export async function issueToken(
  people: PeoplePort,
  name: string,
  now: number,
): Promise<{ token: string; person: WebIdentity } | { problem: string }> {
  const person = (await people.list(now)).find((p) => p.name.toLowerCase() === name.toLowerCase());
  if (!person) {
    return { problem: `nobody named "${name}" is invited: npm run web:invite -- ${name} --operator` };
  }
  if (!person.operator) {
    return { problem: `${person.name} is not an operator: npm run web:invite -- ${person.name} --operator` };
  }
  const made = newToken();
  if (!(await people.addToken(person.name, made.id, made.secretHash, now))) {
    return { problem: `${person.name} was removed meanwhile` };
  }
  return { token: made.token, person: { name: person.name, operator: true } };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
