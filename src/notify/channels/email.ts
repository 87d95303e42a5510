/**
 * Email over SMTP (nodemailer). PLACEHOLDER: the config schema of CONTRACT §13 with its
 * defaults, so channels can be created and validated; sending is built on the notify-mq branch,
 * which replaces this file wholesale.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DeliveryError, type ChannelDriver } from '../types.js';

export const EmailConfig = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 255, description: 'SMTP server' }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 587, description: 'Default 587' }),
    secure: Type.Boolean({ default: false, description: 'Implicit TLS (usually port 465); default false' }),
    require_tls: Type.Boolean({ default: false, description: 'Refuse to send unless STARTTLS succeeds; default false (STARTTLS when offered)' }),
    username: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    password: Type.Optional(Type.Union([Type.String({ maxLength: 512 }), Type.Null()])),
    from: Type.String({ minLength: 3, maxLength: 320, description: 'Sender address' }),
    to: Type.Array(Type.String({ minLength: 3, maxLength: 320 }), { minItems: 1, maxItems: 50, description: 'Recipient addresses' }),
  },
  { additionalProperties: false },
);
export type EmailConfig = Static<typeof EmailConfig>;

export const emailDriver: ChannelDriver<EmailConfig> = {
  type: 'email',
  configSchema: EmailConfig,
  secretKeys: ['password'],
  destinationKeys: ['host'],
  check: () => null,
  send() {
    return Promise.reject(new DeliveryError('not built yet', false));
  },
};
