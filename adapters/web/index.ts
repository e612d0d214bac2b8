export { WEB_PLATFORM } from './connections.js';
export { createWebAdapter, WebAdapter, type WebAdapterOptions } from './web-adapter.js';
