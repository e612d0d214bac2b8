export { FakeSlack, startFakeSlack } from './fake-slack.js';
export { postSigned, signRequest } from './signing.js';
export type {
  Ack,
  ApiCall,
  ChannelType,
  Delivery,
  FakeApp,
  FakeChannel,
  FakeFile,
  FakeHuman,
  FakeMessage,
  Fault,
  FileDownload,
  SlashResponse,
} from './types.js';
