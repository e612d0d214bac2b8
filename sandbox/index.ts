export { channelSlug, containerName } from './channel-key.js';
export { createDockerSandbox, type DockerSandboxOptions } from './docker-sandbox.js';
