/** Config fields that several channel drivers share, each with its own words. */
import { Type } from '@sinclair/typebox';
import { SECRET_MASK } from '../../core/limits.js';
import { Nullable } from '../../schemas/common.js';

/**
 * The optional login of a service (`service`: "SMTP AUTH", "MQTT"): a user name, and a password
 * that is a secret (masked on read, cleared when a destination key changes).
 */
export function loginFields(service: string, usernameMaxLength: number, withoutLogin: string) {
  return {
    username: Type.Optional(
      Nullable(Type.String({ maxLength: usernameMaxLength, title: 'User name', description: `${service} user name; ${withoutLogin}.` })),
    ),
    password: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 1024,
          title: 'Password',
          'x-secret': true,
          description: `${service} password. Reads back as "${SECRET_MASK}"; cleared when a destination key changes.`,
        }),
      ),
    ),
  };
}

/** The TLS trust of a connection: a PEM certificate to trust besides the system CAs, and whether to verify at all. */
export function tlsTrustFields(texts: { caDescription: string; verifyTitle: string; verifyDescription: string }) {
  return {
    tls_ca: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 65536,
          title: 'Trusted certificate (PEM)',
          'x-input': 'multiline',
          description: texts.caDescription,
        }),
      ),
    ),
    tls_reject_unauthorized: Type.Optional(Type.Boolean({ default: true, title: texts.verifyTitle, description: texts.verifyDescription })),
  };
}
