#!/usr/bin/env bash
# Builds the sandbox image without an image registry: debootstrap a minimal Debian
# into a folder, add the unprivileged `sandbox` user, then `docker import` it.
# The Debian mirror comes from this machine's apt sources, so no host is written here.
# When the image exists it is left as it is, but for the command runner: one older than
# sandbox/runner.py is replaced (a layer of that file; no root or debootstrap needed).
#
# Usage: sandbox/build-offline-image.sh [--force] [--print-mirror]
# Env:   SANDBOX_IMAGE (tag, default roundtable-sandbox:latest), SANDBOX_SUITE (default bookworm),
#        SANDBOX_MIRROR (overrides the apt sources), APT_ETC (default /etc/apt; tests point it elsewhere).
set -euo pipefail

IMAGE="${SANDBOX_IMAGE:-roundtable-sandbox:latest}"
SUITE="${SANDBOX_SUITE:-bookworm}"
APT_ETC="${APT_ETC:-/etc/apt}"
# bash, coreutils, grep, sed, tar, findutils and util-linux (setsid) are Essential and come with minbase.
PACKAGES="python3,procps,ca-certificates,less,jq,file,xz-utils,bzip2,unzip"
SANDBOX_UID=1000
# The bridge's command runner, baked in so new containers need not be sent its source.
RUNNER_SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/runner.py"
RUNNER_PATH=/usr/local/lib/roundtable/runner.py

log() { printf '[sandbox:build] %s\n' "$*" >&2; }

# Prints the URI of the first enabled `deb` source serving $SUITE itself (not -security/-updates),
# read from one-line sources.list files and deb822 .sources files.
find_mirror() {
  local file
  local -a files=()
  [[ -f "$APT_ETC/sources.list" ]] && files+=("$APT_ETC/sources.list")
  for file in "$APT_ETC"/sources.list.d/*.list "$APT_ETC"/sources.list.d/*.sources; do
    [[ -f "$file" ]] && files+=("$file")
  done
  for file in "${files[@]}"; do
    if [[ "$file" == *.sources ]]; then
      mirror_from_deb822 "$SUITE" <"$file"
    else
      mirror_from_one_line "$SUITE" <"$file"
    fi
  done | head -n 1
}

# One-line format: `deb [opt=val ...] URI SUITE COMPONENT...`
mirror_from_one_line() {
  awk -v suite="$1" '
    { sub(/#.*/, "") }
    $1 != "deb" { next }
    {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      uri = $i; s = $(i + 1)
      if (s == suite && uri ~ /^(https?|file):/) print uri
    }'
}

# deb822 format: blank-line separated stanzas with Types:, URIs:, Suites:, Enabled:.
mirror_from_deb822() {
  awk -v suite="$1" '
    function flush(   n, i, u, ok) {
      if (types ~ /(^| )deb( |$)/ && enabled != "no") {
        n = split(suites, s, " "); ok = 0
        for (i = 1; i <= n; i++) if (s[i] == suite) ok = 1
        if (ok) {
          n = split(uris, u, " ")
          for (i = 1; i <= n; i++) if (u[i] ~ /^(https?|file):/) { print u[i]; break }
        }
      }
      types = ""; uris = ""; suites = ""; enabled = ""
    }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { flush(); next }
    {
      line = $0; key = tolower(line); sub(/:.*/, "", key)
      value = line; sub(/^[^:]*:[ \t]*/, "", value); gsub(/[ \t]+/, " ", value); sub(/ $/, "", value)
      if (key == "types") types = value
      else if (key == "uris") uris = value
      else if (key == "suites") suites = value
      else if (key == "enabled") enabled = tolower(value)
    }
    END { flush() }'
}

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-mirror)
      mirror="${SANDBOX_MIRROR:-$(find_mirror)}"
      [[ -n "$mirror" ]] || { log "no deb source for $SUITE in $APT_ETC"; exit 1; }
      printf '%s\n' "$mirror"
      exit 0
      ;;
    *) log "unknown argument: $arg"; exit 2 ;;
  esac
done

# The image exists: bake this checkout's command runner into it when it carries another (an image built
# before the runner changed), with a layer of that one file; docker alone, no debootstrap and no root.
if [[ $force -eq 0 ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  want="$(sha256sum <"$RUNNER_SOURCE" | cut -d' ' -f1)"
  baked="$(docker run --rm --entrypoint sh "$IMAGE" -c "sha256sum < $RUNNER_PATH 2>/dev/null" | cut -d' ' -f1 || true)"
  if [[ "$baked" == "$want" ]]; then
    log "image $IMAGE already exists with this command runner; skipping (use --force to rebuild)"
    exit 0
  fi
  log "image $IMAGE carries another command runner: baking sandbox/runner.py into $IMAGE"
  staging="$(mktemp -d "${TMPDIR:-/tmp}/roundtable-runner.XXXXXX")"
  container=""
  trap 'rm -rf "$staging"; [[ -z "$container" ]] || docker rm -f "$container" >/dev/null' EXIT
  install -D -m 0644 "$RUNNER_SOURCE" "$staging$RUNNER_PATH"
  container="$(docker create "$IMAGE")"
  # The file alone (no folder entries, which would set the modes of / and /usr): docker makes missing folders.
  tar --numeric-owner --owner=0 --group=0 -C "$staging" -c "${RUNNER_PATH#/}" | docker cp - "$container:/"
  docker commit --message "roundtable sandbox: command runner $want" "$container" "$IMAGE" >/dev/null
  log "baked the command runner into $IMAGE"
  exit 0
fi

command -v debootstrap >/dev/null || { log "debootstrap is missing: apt-get install -y debootstrap"; exit 1; }
[[ $(id -u) -eq 0 ]] || { log "debootstrap needs root: run this script as root"; exit 1; }

mirror="${SANDBOX_MIRROR:-$(find_mirror)}"
[[ -n "$mirror" ]] || { log "no deb source for $SUITE in $APT_ETC; set SANDBOX_MIRROR"; exit 1; }

rootfs="$(mktemp -d "${TMPDIR:-/tmp}/roundtable-rootfs.XXXXXX")"
trap 'rm -rf "$rootfs"' EXIT

log "debootstrap --variant=minbase $SUITE from $mirror (packages: $PACKAGES)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$mirror" >&2

log "adding user sandbox (uid $SANDBOX_UID) and /workspace"
chroot "$rootfs" groupadd --gid "$SANDBOX_UID" sandbox
chroot "$rootfs" useradd --uid "$SANDBOX_UID" --gid "$SANDBOX_UID" --create-home --shell /bin/bash sandbox
mkdir -p "$rootfs/workspace"
chown "$SANDBOX_UID:$SANDBOX_UID" "$rootfs/workspace"
install -D -m 0644 "$RUNNER_SOURCE" "$rootfs$RUNNER_PATH"
# Not needed inside the image; keeps it small.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

log "docker import -> $IMAGE"
tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'USER sandbox' \
  --change 'WORKDIR /workspace' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/home/sandbox' \
  --change 'CMD ["sleep", "infinity"]' \
  --message "roundtable sandbox ($SUITE minbase, offline build)" \
  - "$IMAGE" >/dev/null
log "built $IMAGE"
