/**
 * Files attached to incoming messages (Inbound.files): each is copied into the room's sandbox workspace under
 * `uploads/`, and the message the agents read gets one `[file: …]` line per file saying where it is, or why it is
 * not there (over the platform's size limit: not even downloaded; no workspace; a failed download). The lines stay
 * apart from the message's text, so a file's name is never read for mentions. A message waits for its files before
 * it is stored, and later messages of its room wait for it, so the room keeps its order.
 */
import type { Settings } from '../../config/index.js';
import { describeError, RoundtableError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Inbound, InboundFile, Sandbox, WorkspaceFiles } from '../../ports.js';
import { describeFsError, workspaceFilesFor } from '../../tools/workspace-path.js';
import { fileLine, nameCandidates, safeFileName } from './upload-names.js';

export const UPLOADS_FOLDER = 'uploads';

/** An incoming message once its files are saved: the bridge's lines about them, in place of the files. */
export type Prepared = Omit<Inbound, 'files'> & { readonly fileLines?: readonly string[] };

/** One file's download may take this long before it is given up. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface UploadDeps {
  readonly sandbox: Pick<Sandbox, 'workspaceFiles' | 'workspaceDir' | 'ensureWorkspace'>;
  readonly settings: Pick<Settings, 'SLACK_MAX_FILE_MB' | 'DISCORD_MAX_FILE_MB' | 'WEB_MAX_FILE_MB'>;
  readonly logger: Logger;
  /** Whether the message is stored already (delivered again): its files are not fetched a second time. */
  readonly stored: (event: Inbound) => Promise<boolean>;
}

export class Uploads {
  /** Room key → the message of that room still being prepared (its files downloading). */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: UploadDeps) {}

  /** Whether `event` must wait here: it has files, or an earlier message of its room is still downloading. */
  holds(event: Inbound): boolean {
    return (event.files?.length ?? 0) > 0 || this.busy.has(roomKey(event));
  }

  /** The event as the agents should read it, once its files are saved (and its room's earlier ones). */
  take(event: Inbound): Promise<Prepared> {
    const key = roomKey(event);
    const before = this.busy.get(key) ?? Promise.resolve();
    const ready = before.then(() => this.save(key, event));
    const settled = ready.catch(() => undefined);
    this.busy.set(key, settled);
    void settled.then(() => {
      if (this.busy.get(key) === settled) this.busy.delete(key);
    });
    return ready;
  }

  private async save(key: string, event: Inbound): Promise<Prepared> {
    const { files, ...rest } = event;
    // No files (it only waited for an earlier message), or a duplicate (the store drops it).
    if (!files?.length || (await this.deps.stored(event))) return rest;
    const limit = this.limitMb(event.platform);
    const workspace = await this.workspace(key);
    const lines: string[] = [];
    for (const file of files) {
      const name = safeFileName(file.name);
      if (limit !== undefined && file.size > limit * 1024 * 1024) {
        lines.push(fileLine(name, file, `not saved: larger than the ${limit} MB limit`));
        continue;
      }
      if ('error' in workspace) {
        lines.push(fileLine(name, file, `not saved: ${workspace.error}`));
        continue;
      }
      try {
        const saved = await this.store(workspace.files, name, file, limit);
        lines.push(fileLine(`${UPLOADS_FOLDER}/${saved}`, file));
      } catch (error) {
        this.deps.logger.warn({ err: error, room: key, file: name }, 'an uploaded file could not be saved');
        lines.push(fileLine(name, file, `could not be saved: ${describeError(error)}`));
      }
    }
    return { ...rest, fileLines: lines };
  }

  /** Downloads one file (never more than the limit) and writes it under a name not taken yet. */
  private async store(
    files: WorkspaceFiles,
    name: string,
    file: InboundFile,
    limitMb: number | undefined,
  ): Promise<string> {
    const bytes = await file.download(AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS));
    if (limitMb !== undefined && bytes.byteLength > limitMb * 1024 * 1024) {
      throw new Error(`larger than the ${limitMb} MB limit`);
    }
    for (const candidate of nameCandidates(name)) {
      const rel = `${UPLOADS_FOLDER}/${candidate}`;
      try {
        if ((await files.kind(rel)) !== undefined) continue; // taken
        await files.write(rel, bytes);
      } catch (error) {
        throw new Error(describeFsError(error), { cause: error });
      }
      return candidate;
    }
    throw new Error('no free name');
  }

  /** The room's workspace, created (and seeded from the template) when it does not exist yet. */
  private async workspace(key: string): Promise<{ files: WorkspaceFiles } | { error: string }> {
    try {
      const files = await workspaceFilesFor(this.deps.sandbox, key);
      if (!files) return { error: 'this room has no workspace (the sandbox is not available)' };
      return { files };
    } catch (error) {
      this.deps.logger.warn({ err: error, room: key }, 'the workspace for an upload could not be prepared');
      // The sandbox's own failures (an engine that does not answer) say what to do; a file system's are named.
      const reason = error instanceof RoundtableError ? error.message : describeFsError(error);
      return { error: `the workspace could not be prepared (${reason})` };
    }
  }

  /** The platform's size limit in MB, if it has one. */
  private limitMb(platform: string): number | undefined {
    const { settings } = this.deps;
    if (platform === 'slack') return settings.SLACK_MAX_FILE_MB;
    if (platform === 'discord') return settings.DISCORD_MAX_FILE_MB;
    if (platform === 'web') return settings.WEB_MAX_FILE_MB;
    return undefined;
  }
}

function roomKey(event: Inbound): string {
  return `${event.platform}:${event.channel}`;
}
