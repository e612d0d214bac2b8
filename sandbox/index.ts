export { channelSlug, containerName } from './channel-key.js';
export { checkDocker } from './docker-check.js';
export { createDockerSandbox, type DockerSandboxOptions } from './docker-sandbox.js';
