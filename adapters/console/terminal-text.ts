// biome-ignore-all lint/suspicious/noControlCharactersInRegex: matching control characters is what this file is for
/**
 * Text from agents, tools and the network, made safe to print in a terminal: no escape sequence and
 * no control character but newline and tab, so a command's output cannot move the cursor, clear the
 * screen, retitle the window or write to the clipboard. Follows ECMA-48's grammar rather than a list
 * of known sequences (strip-ansi leaves `ESC \`, BEL and most OSC payloads behind).
 */

/** OSC, DCS, SOS, PM and APC strings, up to their terminator (BEL or ST); C1 introducers too. */
const STRING_COMMAND = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)/g;
/** CSI: parameters, intermediates and a final byte (cursor moves, erases, colours, modes). */
const CSI = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/g;
/** Any other escape sequence (ESC c resets, ESC 7 saves the cursor, ESC ( B picks a charset...). */
const ESCAPE = /\x1b[\x20-\x2f]*[\x30-\x7e]/g;
/** What is left: C0 controls but tab and newline, DEL, C1 controls (a lone ESC, an unterminated introducer). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** The printable part of `text`: escape sequences and control characters removed, CRLF as LF. */
export function safeForTerminal(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(STRING_COMMAND, '')
    .replace(CSI, '')
    .replace(ESCAPE, '')
    .replace(CONTROL, '');
}
