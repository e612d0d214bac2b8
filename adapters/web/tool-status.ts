/**
 * How a tool run ended, as the page labels it. The bash tool writes a command's end into the output it gives the
 * agent: `[exit code: N]` for a command that failed, `[ERROR: Command timed out after …]` for one that ran out of
 * time, nothing for success. A call that was refused or could not run is `[ERROR: …]` and nothing else.
 */

/** `exit 0`, `exit 2`, `timed out`, `failed` for a command; `done` or `failed` for another tool. */
export function toolStatus(tool: string, output: string): string {
  const tail = output.slice(-200);
  if (tool === 'bash' && /\[ERROR: Command timed out after [^\]]*\]\s*$/.test(tail)) return 'timed out';
  if (/^\[ERROR: [\s\S]*\]$/.test(output.trim())) return 'failed';
  if (tool !== 'bash') return 'done';
  const code = /\[exit code: (-?\d+)\]\s*$/.exec(tail);
  return code ? `exit ${code[1]}` : 'exit 0';
}
