export {
  CONSOLE_PLATFORM,
  CONSOLE_ROOM,
  ConsoleAdapter,
  type ConsoleAdapterOptions,
  terminalChannel,
} from './console-adapter.js';
