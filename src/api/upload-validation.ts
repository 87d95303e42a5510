/**
 * An agent's upload (up to 128 MiB) is checked against its schema in parts, giving the event loop
 * back between them: checked in one go, a 100 MiB upload held every other request (and /health)
 * up for seconds. The result and the messages are those of the route's own schema validation
 * (`ports.2.ports.0.port: must be <= 65535`).
 */
import type { FastifySchemaCompiler } from 'fastify';
import { AgentUploadParts, type AgentUpload } from '../schemas/agent.js';
import { HttpError } from './errors.js';
import { describeValidationError } from './errors.js';
import { createValidatorCompiler } from './validation.js';

/** Items checked between two turns of the event loop. */
const ITEMS_PER_TURN = 20_000;

type Check = ((data: unknown) => boolean) & {
  errors?: { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }[] | null;
};

export class UploadValidator {
  private readonly envelope: Check;
  private readonly host: Check;
  private readonly scannedHost: Check;
  private readonly port: Check;

  constructor(compile: FastifySchemaCompiler<unknown> = createValidatorCompiler()) {
    const build = (schema: object) => compile({ schema, httpPart: 'body', method: 'POST', url: '/api/agent/scans/:scan_id/results' }) as Check;
    this.envelope = build(AgentUploadParts.envelope);
    this.host = build(AgentUploadParts.host);
    this.scannedHost = build(AgentUploadParts.scannedHost);
    this.port = build(AgentUploadParts.port);
  }

  /** Resolves to the body as an AgentUpload, or throws a 400 naming the first entry that is not one. */
  async validate(body: unknown): Promise<AgentUpload> {
    let done = 0;
    const turn = async () => {
      if (++done % ITEMS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    };
    check(this.envelope, body, '');
    const upload = body as { hosts: unknown[]; ports: { ports: unknown[] }[] };
    for (const [i, host] of upload.hosts.entries()) {
      check(this.host, host, `/hosts/${i}`);
      await turn();
    }
    for (const [i, host] of upload.ports.entries()) {
      check(this.scannedHost, host, `/ports/${i}`);
      for (const [j, port] of host.ports.entries()) {
        check(this.port, port, `/ports/${i}/ports/${j}`);
        await turn();
      }
    }
    return body as AgentUpload;
  }
}

function check(validate: Check, value: unknown, path: string): void {
  if (validate(value)) return;
  const errors = (validate.errors ?? []).map((e) => ({ ...e, instancePath: path + e.instancePath }));
  throw new HttpError('NW_VALIDATION', describeValidationError(errors, 'body'));
}
