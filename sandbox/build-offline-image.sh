#!/usr/bin/env bash
# Builds the sandbox image without an image registry: debootstrap a minimal Debian
# into a folder, add the unprivileged `sandbox` user, then `docker import` it.
# The Debian mirror comes from this machine's apt sources, so no host is written here.
# When the image exists it is left as it is, but for the command runner and the MCP servers: one older than
# sandbox/runner.py, or without the Node and MCP packages asked for, gets a layer with them (no root or debootstrap).
#
# Usage: sandbox/build-offline-image.sh [--force] [--print-mirror]
# Env:   SANDBOX_IMAGE (tag, default roundtable-sandbox:latest), SANDBOX_SUITE (default bookworm),
#        SANDBOX_MIRROR (overrides the apt sources), APT_ETC (default /etc/apt; tests point it elsewhere),
#        SANDBOX_NODE=1 (add this machine's Node binary, for MCP servers written for Node),
#        SANDBOX_MCP_PACKAGES="pkg pkg" (npm MCP servers copied with their dependencies from SANDBOX_NODE_MODULES,
#        default this checkout's node_modules, into /opt/mcp, their commands linked into /usr/local/bin; implies Node).
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
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MCP_PACKAGES="${SANDBOX_MCP_PACKAGES:-}"
NODE_MODULES="${SANDBOX_NODE_MODULES:-$HERE/../node_modules}"
MCP_MANIFEST=/usr/local/lib/roundtable/mcp.txt

log() { printf '[sandbox:build] %s\n' "$*" >&2; }

# What the image should carry for MCP servers (stage-mcp.mjs's manifest); empty when neither is asked for.
mcp_wanted() {
  [[ -n "$MCP_PACKAGES" || "${SANDBOX_NODE:-}" == 1 ]] || return 0
  command -v node >/dev/null || { log "node is missing on this machine: it is the Node copied into the image"; exit 1; }
  # shellcheck disable=SC2086 # a list of package names
  node "$HERE/stage-mcp.mjs" --manifest "$NODE_MODULES" $MCP_PACKAGES
}

# Node runs in the image (its libraries are there: ldd /usr/local/bin/node names what is missing).
check_node() {
  docker run --rm --network none --entrypoint /usr/local/bin/node "$IMAGE" --version >/dev/null ||
    { log "node does not run in $IMAGE: check its libraries with ldd $(command -v node)"; exit 1; }
}

# Stages Node and the MCP packages into folder $1 (laid out like the image's root).
stage_mcp() {
  # shellcheck disable=SC2086 # a list of package names
  node "$HERE/stage-mcp.mjs" "$1" "$NODE_MODULES" $MCP_PACKAGES
}

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
# before the runner changed), and Node with the MCP packages asked for when it lacks them, with a layer of those
# files; docker alone, no debootstrap and no root.
if [[ $force -eq 0 ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  want="$(sha256sum <"$RUNNER_SOURCE" | cut -d' ' -f1)"
  want_mcp="$(mcp_wanted)"
  baked="$(docker run --rm --network none --entrypoint sh "$IMAGE" -c "sha256sum < $RUNNER_PATH 2>/dev/null" | cut -d' ' -f1 || true)"
  baked_mcp="$(docker run --rm --network none --entrypoint sh "$IMAGE" -c "cat $MCP_MANIFEST 2>/dev/null" || true)"
  need_mcp=0
  [[ -z "$want_mcp" || "$baked_mcp" == "$want_mcp" ]] || need_mcp=1
  if [[ "$baked" == "$want" && $need_mcp -eq 0 ]]; then
    log "image $IMAGE already exists with this command runner; skipping (use --force to rebuild)${want_mcp:+; it has these MCP packages}"
    exit 0
  fi
  staging="$(mktemp -d "${TMPDIR:-/tmp}/roundtable-runner.XXXXXX")"
  container=""
  trap 'rm -rf "$staging"; [[ -z "$container" ]] || docker rm -f "$container" >/dev/null' EXIT
  paths=()
  if [[ "$baked" != "$want" ]]; then
    log "image $IMAGE carries another command runner: baking sandbox/runner.py into $IMAGE"
    install -D -m 0644 "$RUNNER_SOURCE" "$staging$RUNNER_PATH"
    paths+=("${RUNNER_PATH#/}")
  fi
  if [[ $need_mcp -eq 1 ]]; then
    log "adding Node and MCP packages to $IMAGE: ${MCP_PACKAGES:-none}"
    stage_mcp "$staging"
    paths+=(usr/local/bin "${MCP_MANIFEST#/}")
    [[ ! -d "$staging/opt/mcp" ]] || paths+=(opt/mcp)
  fi
  container="$(docker create "$IMAGE")"
  # The files alone (no entries for / or /usr, which would set their modes): docker makes missing folders.
  tar --numeric-owner --owner=0 --group=0 -C "$staging" -c "${paths[@]}" | docker cp - "$container:/"
  docker commit --message "roundtable sandbox: command runner $want${want_mcp:+, MCP packages}" "$container" "$IMAGE" >/dev/null
  [[ $need_mcp -eq 0 ]] || check_node
  log "updated $IMAGE"
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
if [[ -n "$(mcp_wanted)" ]]; then
  log "adding Node and MCP packages: ${MCP_PACKAGES:-none}"
  stage_mcp "$rootfs"
fi
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
[[ -z "$(mcp_wanted)" ]] || check_node
log "built $IMAGE"
