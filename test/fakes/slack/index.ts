export { FakeSlack, startFakeSlack } from './fake-slack.js';
export { postSigned, signRequest } from './signing.js';
export type {
  Ack,
  ApiCall,
  ChannelType,
  Delivery,
  FakeApp,
  FakeChannel,
  FakeHuman,
  FakeMessage,
  Fault,
  SlashResponse,
} from './types.js';
