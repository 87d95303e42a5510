/**
 * The email channel against a real SMTP server (smtp-server on 127.0.0.1, a random port): what
 * arrives (parsed with mailparser), each way of securing the connection, authentication, and how
 * each kind of failure is classed for the retry loop.
 */
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { type EmailConfig, emailDriver } from '../../src/notify/channels/email.js';
import { DeliveryError } from '../../src/notify/types.js';
import { closedPort, silentListener } from '../helpers/listeners.js';
import { deliveryFailure, sampleMessage, sendContext, testCertificate } from './email-mqtt-fixtures.js';

interface Received {
  mail: ParsedMail;
  session: { secure: boolean; user: unknown; from: string | false; to: string[] };
}

interface TestSmtp {
  port: number;
  received: Received[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An SMTP server on 127.0.0.1 that parses and keeps every message it accepts. */
async function startSmtp(options: SMTPServerOptions = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    ...options,
    onData(stream, session: SMTPServerSession, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            mail,
            session: {
              secure: session.secure,
              user: session.user,
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : false,
              to: session.envelope.rcptTo.map((r) => r.address),
            },
          });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: address.port, received };
}

function config(port: number, overrides: Partial<EmailConfig> = {}): EmailConfig {
  return {
    host: '127.0.0.1',
    port,
    secure: false,
    require_tls: false,
    from: 'Netwarden <netwarden@lab.example>',
    to: ['ops@lab.example', 'Second Person <second@lab.example>'],
    tls_reject_unauthorized: true,
    ...overrides,
  };
}

async function sendFailure(cfg: EmailConfig, timeoutMs = 5000): Promise<DeliveryError> {
  return deliveryFailure(emailDriver.send(cfg, sampleMessage(), sendContext(timeoutMs)));
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(field) ? field : field ? [field] : [];
  return list.flatMap((a) => a.value.map((v) => v.address ?? ''));
}

describe('email channel: what arrives', () => {
  it('sends one message with the subject, filter headers, a text body and an escaped HTML body', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
    await emailDriver.send(config(smtp.port), sampleMessage(), sendContext());

    expect(smtp.received).toHaveLength(1);
    const { mail, session } = smtp.received[0];
    expect(session.from).toBe('netwarden@lab.example');
    expect(session.to).toEqual(['ops@lab.example', 'second@lab.example']);
    expect(mail.from?.value[0]).toMatchObject({ address: 'netwarden@lab.example', name: 'Netwarden' });
    expect(addresses(mail.to)).toEqual(['ops@lab.example', 'second@lab.example']);
    expect(mail.subject).toBe('Netwarden: 2 changes on 192.168.77.0/24');
    expect(mail.headers.get('x-netwarden-event')).toBe('scan.changes');
    expect(mail.headers.get('x-netwarden-delivery')).toBe('42');
    expect(mail.headers.get('x-netwarden-severity')).toBe('high');
    expect(mail.headers.get('x-netwarden-scan')).toBe('12');
    expect(mail.headers.get('x-netwarden-subnet')).toBe('192.168.77.0/24');
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    expect(mail.headers.get('x-mailer')).toBe('Netwarden/0.1.0-test');
    expect(mail.messageId).toMatch(/^<netwarden\.delivery\.42\.\d+@lab\.example>$/);

    // Plain text: the summary, each device with its link when known, its changes.
    const text = mail.text ?? '';
    expect(text).toContain('2 changes on 192.168.77.0/24: 1 new device, 1 port opened');
    expect(text).toContain('192.168.77.5 "<script>alert(1)</script>"');
    expect(text).toContain('  - [medium] New device 192.168.77.5 <b>joined</b>');
    expect(text).toContain('192.168.77.9 "NAS"  <https://netwarden.example/devices/9>');
    expect(text).toContain('  - [high] Port 23/tcp opened (telnet)');
    expect(text).toContain('Scan #12 of 192.168.77.0/24: completed');
    expect(text.indexOf('192.168.77.5')).toBeLessThan(text.indexOf('192.168.77.9 "NAS"'));

    // HTML: the same content, every label and description escaped, the device link an anchor.
    const html = typeof mail.html === 'string' ? mail.html : '';
    expect(html).toContain('192.168.77.5 &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('New device 192.168.77.5 &lt;b&gt;joined&lt;/b&gt;');
    expect(html).not.toContain('<b>joined');
    expect(html).toContain('<a href="https://netwarden.example/devices/9">192.168.77.9 &quot;NAS&quot;</a>');
    expect(html).toContain('Port 23/tcp opened (telnet)');
  });

  it('gives every attempt of one delivery the same Message-ID', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
    await emailDriver.send(config(smtp.port), sampleMessage(), sendContext());
    await emailDriver.send(config(smtp.port), sampleMessage(), sendContext());
    await emailDriver.send(config(smtp.port), sampleMessage({ deliveryId: 43 }), sendContext());
    const ids = smtp.received.map((r) => r.mail.messageId);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
  });

  it('sends a scan event without changes, and never makes a link of a non-web URL', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
    const failed = sampleMessage({
      event: 'scan.failed',
      title: 'Netwarden: scan #12 failed',
      summary: 'Scan #12 of 192.168.77.0/24 failed',
      groups: [],
      changes: [],
      severity: 'info',
      scan: { ...sampleMessage().scan!, status: 'failed', error: 'nmap exited with status 1' },
    });
    await emailDriver.send(config(smtp.port), failed, sendContext());
    const { mail } = smtp.received[0];
    expect(mail.headers.get('x-netwarden-event')).toBe('scan.failed');
    expect(mail.text).toContain('error: nmap exited with status 1');

    const hostile = sampleMessage();
    hostile.groups[1] = { ...hostile.groups[1], url: 'javascript:alert(1)' };
    await emailDriver.send(config(smtp.port), hostile, sendContext());
    const html = String(smtp.received[1].mail.html);
    expect(html).not.toContain('href="javascript');
  });
});

describe('email channel: transport security', () => {
  it('upgrades with STARTTLS when offered, trusting the self-signed server through tls_ca', async () => {
    const { key, cert } = await testCertificate();
    const smtp = await startSmtp({ key, cert, disabledCommands: ['AUTH'] });
    await emailDriver.send(config(smtp.port, { tls_ca: cert }), sampleMessage(), sendContext());
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].session.secure).toBe(true);
  });

  it('refuses a certificate it cannot verify, permanently, and names tls_ca', async () => {
    const { key, cert } = await testCertificate();
    const smtp = await startSmtp({ key, cert, disabledCommands: ['AUTH'] });
    const error = await sendFailure(config(smtp.port));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/certificate/i);
    expect(error.message).toContain('tls_ca');
    expect(smtp.received).toHaveLength(0);
  });

  it('sends over an unverified TLS connection only when tls_reject_unauthorized is false', async () => {
    const { key, cert } = await testCertificate();
    const smtp = await startSmtp({ key, cert, disabledCommands: ['AUTH'] });
    await emailDriver.send(config(smtp.port, { tls_reject_unauthorized: false }), sampleMessage(), sendContext());
    expect(smtp.received[0].session.secure).toBe(true);
  });

  it('with require_tls, fails permanently when the server offers no STARTTLS', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
    const error = await sendFailure(config(smtp.port, { require_tls: true }));
    expect(error.retryable).toBe(false);
    expect(smtp.received).toHaveLength(0);
  });

  it('without require_tls, sends in the clear to a server that offers no STARTTLS', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
    await emailDriver.send(config(smtp.port), sampleMessage(), sendContext());
    expect(smtp.received[0].session.secure).toBe(false);
  });

  it('speaks TLS from the first byte with secure: true', async () => {
    const { key, cert } = await testCertificate();
    const smtp = await startSmtp({ secure: true, key, cert, disabledCommands: ['AUTH'] });
    await emailDriver.send(config(smtp.port, { secure: true, tls_ca: cert }), sampleMessage(), sendContext());
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].session.secure).toBe(true);
  });
});

describe('email channel: authentication', () => {
  async function authServer() {
    const { key, cert } = await testCertificate();
    const smtp = await startSmtp({
      key,
      cert,
      authOptional: false,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth(auth, _session, callback) {
        if (auth.username === 'alerts' && auth.password === 'correct horse') return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
    });
    return { smtp, cert };
  }

  it('logs in with username and password over STARTTLS', async () => {
    const { smtp, cert } = await authServer();
    await emailDriver.send(config(smtp.port, { tls_ca: cert, username: 'alerts', password: 'correct horse' }), sampleMessage(), sendContext());
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].session.user).toBe('alerts');
  });

  it('a wrong password is a permanent failure', async () => {
    const { smtp, cert } = await authServer();
    const error = await sendFailure(config(smtp.port, { tls_ca: cert, username: 'alerts', password: 'wrong' }));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/authentication failed/i);
    expect(error.message).not.toContain('wrong');
    expect(smtp.received).toHaveLength(0);
  });

  it('a username whose password was cleared fails permanently, naming config.password, without connecting', async () => {
    const error = await sendFailure(config(await closedPort('127.0.0.1'), { username: 'alerts', password: null }));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^config\.password: /);
  });

  it('a server that requires AUTH, given none, is a permanent failure', async () => {
    const { smtp, cert } = await authServer();
    const error = await sendFailure(config(smtp.port, { tls_ca: cert }));
    expect(error.retryable).toBe(false);
  });
});

describe('email channel: failures for the retry loop', () => {
  it('451 (try again later) is retryable; 550 (rejected) is not', async () => {
    const reply = (code: number, text: string) => {
      const error = new Error(text) as Error & { responseCode: number };
      error.responseCode = code;
      return error;
    };
    const busy = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'], onRcptTo: (_a, _s, cb) => cb(reply(451, 'Local error, try later')) });
    const busyError = await sendFailure(config(busy.port));
    expect(busyError.retryable).toBe(true);
    expect(busyError.message).toContain('451');

    const busyData = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'], onMailFrom: (_a, _s, cb) => cb(reply(421, 'Service not available')) });
    expect((await sendFailure(config(busyData.port))).retryable).toBe(true);

    const refuse = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'], onRcptTo: (_a, _s, cb) => cb(reply(550, 'No such user')) });
    const refuseError = await sendFailure(config(refuse.port));
    expect(refuseError.retryable).toBe(false);
    expect(refuseError.message).toContain('550');
  });

  it('connection refused is retryable', async () => {
    const error = await sendFailure(config(await closedPort('127.0.0.1')));
    expect(error.retryable).toBe(true);
  });

  it('a server that accepts the connection but never greets ends the attempt as retryable', async () => {
    const silent = await silentListener('127.0.0.1');
    cleanups.push(() => silent.close());
    const error = await sendFailure(config(silent.port), 400);
    expect(error.retryable).toBe(true);
  });
});

describe('email channel: check()', () => {
  const valid = config(587);

  it('accepts a complete config', () => {
    expect(emailDriver.check(valid)).toBeNull();
    expect(emailDriver.check({ ...valid, host: 'smtp.example.com', to: ['root@localhost'], from: 'alerts@[192.168.1.10]' })).toBeNull();
  });

  it.each([
    [{ port: 0 }, /^config\.port: /],
    [{ port: 65536 }, /^config\.port: /],
    [{ host: 'smtp://mail.example.com' }, /^config\.host: .*not a URL/],
    [{ host: 'mail example.com' }, /^config\.host: /],
    [{ from: 'not an address' }, /^config\.from: /],
    [{ from: 'a@b.example\r\nBcc: x@y.example' }, /^config\.from: /],
    [{ to: [] }, /^config\.to: .*at least one/],
    [{ to: ['ok@example.com', 'bad@'] }, /^config\.to\.1: /],
    [{ to: ['two@example.com, three@example.com'] }, /^config\.to\.0: /],
    [{ password: 'secret' }, /^config\.username: /],
    [{ tls_ca: 'not a certificate' }, /^config\.tls_ca: /],
  ] as [Partial<EmailConfig>, RegExp][])('rejects %j', (overrides, message) => {
    expect(emailDriver.check({ ...valid, ...overrides })).toMatch(message);
  });

  it('binds the password to the server, port, user name and TLS trust', () => {
    expect(emailDriver.secretKeys).toEqual(['password']);
    expect(emailDriver.destinationKeys).toEqual(expect.arrayContaining(['host', 'port', 'username', 'tls_ca', 'tls_reject_unauthorized']));
  });

  it('declares the defaults of CONTRACT §13 in its schema', () => {
    const props = emailDriver.configSchema.properties as Record<string, { default?: unknown }>;
    expect(props.port.default).toBe(587);
    expect(props.secure.default).toBe(false);
    expect(props.require_tls.default).toBe(false);
    expect(props.tls_reject_unauthorized.default).toBe(true);
    expect(emailDriver.configSchema.required).toEqual(expect.arrayContaining(['host', 'from', 'to']));
  });
});
