/** Stable semantic-convention names the spans use, from the conventions package (one place to change them). */
export { ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';

/** `messaging.message.id` (incubating upstream): the platform's id of the message. */
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
