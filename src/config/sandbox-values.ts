/**
 * The formats of the SANDBOX_* values, checked when the settings are read, so a typo stops
 * start-up (and `--check`) instead of failing an agent's first `bash`.
 */

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** A workspace's disk allowance (SANDBOX_DISK) is 0 (none) or at least this. */
export const MIN_DISK_BYTES = 1024 ** 2;

/** SANDBOX_DISK in bytes (0 = no limit); undefined when it is not a size, or under 1 MiB. */
export function diskLimitBytes(value: string): number | undefined {
  const bytes = sizeInBytes(value);
  return bytes === undefined || (bytes > 0 && bytes < MIN_DISK_BYTES) ? undefined : bytes;
}

/** Docker refuses memory limits under 6 MB. */
export const MIN_MEMORY_BYTES = 6 * 1024 ** 2;

/** A Docker-style size (`512m`, `1g`, `1.5g`, `268435456`) in bytes; undefined when it is not one. */
export function sizeInBytes(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmgt]?)b?$/i.exec(value.trim());
  const unit = UNITS[match?.[2]?.toLowerCase() ?? ''];
  const bytes = match && unit ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  return Number.isFinite(bytes) ? bytes : undefined;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
/** `[registry[:port]/]name[/name...][:tag][@sha256:digest]`, Docker's reference grammar. */
export const IMAGE_REFERENCE = new RegExp(
  `^(?:[A-Za-z0-9.-]+(?::\\d+)?/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`,
);

/** `none`, `bridge`, `host`, `container:<name|id>` or a user-defined network's name. */
export const NETWORK_MODE = /^(?:container:[A-Za-z0-9][A-Za-z0-9_.-]*|[A-Za-z0-9][A-Za-z0-9_.-]*)$/;
