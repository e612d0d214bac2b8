/**
 * Sign-in codes and session tokens: 256 random bits each, carried by a link or a cookie, kept in the store only as
 * their SHA-256 digest (a copy of the database opens nothing).
 */
import { createHash, randomBytes } from 'node:crypto';

/** A fresh code or token (URL- and cookie-safe). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the store keeps of a code or token. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A secret as it may appear in a link or cookie (anything else is not looked up at all). */
export function looksLikeSecret(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
