export { CONSOLE_PLATFORM, CONSOLE_ROOM, ConsoleAdapter, type ConsoleAdapterOptions } from './console-adapter.js';
