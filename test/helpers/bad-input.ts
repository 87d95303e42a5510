import { expect, it } from 'vitest';
import { STATUS_OF_CODE } from '../../src/api/errors.js';
import type { ErrorCode } from '../../src/util/errors.js';
import type { RequestOptions, TestServer } from './server.js';

export interface BadBodyTarget {
  /** The running server and the credentials to send (none for public endpoints). */
  context(): { server: TestServer; auth: Pick<RequestOptions, 'key' | 'cookie'> };
  method: 'POST' | 'PUT';
  path: string;
  /** A body the endpoint would accept, used as the base for the unknown-field case. */
  valid: Record<string, unknown>;
  /** Bodies with one field of the wrong type, and the field the 400 must name. */
  wrongTypes: Array<{ body: unknown; field: string }>;
}

/**
 * Declares, inside the current describe, the malformed-body cases every JSON endpoint must
 * answer with 400/413/415, a `detail` and a `code` of that status — never a 500.
 */
export function itRejectsBadBodies(target: BadBodyTarget): void {
  const send = (init: RequestOptions) => {
    const { server, auth } = target.context();
    return server.request(target.path, { method: target.method, ...auth, ...init });
  };
  const expectDetail = async (res: Response, status: number, pattern: RegExp) => {
    expect(res.status).toBe(status);
    const body = (await res.json()) as { detail?: unknown; code?: string };
    expect(typeof body.detail).toBe('string');
    expect(body.detail).toMatch(pattern);
    // The code on the wire is one answered with this status.
    expect(STATUS_OF_CODE[body.code as ErrorCode], body.code).toBe(status);
  };

  it(`${target.method} ${target.path}: malformed JSON → 400`, async () => {
    await expectDetail(await send({ json: '{"name": "x", ' }), 400, /malformed JSON/);
    await expectDetail(await send({ json: '{name: x}' }), 400, /malformed JSON/);
  });

  it(`${target.method} ${target.path}: a body that is not JSON → 415`, async () => {
    await expectDetail(await send({ body: 'name=x', headers: { 'Content-Type': 'text/plain' } }), 415, /Content-Type/);
    await expectDetail(await send({ body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), 415, /Content-Type/);
  });

  it(`${target.method} ${target.path}: a body over 1 MiB → 413`, async () => {
    const big = JSON.stringify({ ...target.valid, padding: 'x'.repeat(1024 * 1024) });
    await expectDetail(await send({ json: big }), 413, /1 MiB/);
  });

  it(`${target.method} ${target.path}: a JSON value that is not an object → 400`, async () => {
    for (const json of ['[]', '[1,2]', '"text"', '42', 'null']) {
      await expectDetail(await send({ json }), 400, /^body: /);
    }
  });

  it(`${target.method} ${target.path}: an unknown field → 400 naming it`, async () => {
    await expectDetail(await send({ json: { ...target.valid, surprise_field: 1 } }), 400, /surprise_field/);
  });

  it(`${target.method} ${target.path}: wrong types → 400 naming the field`, async () => {
    for (const { body, field } of target.wrongTypes) {
      const res = await send({ json: body });
      const text = await res.text();
      expect(res.status, `${JSON.stringify(body)} → ${text}`).toBe(400);
      expect(JSON.parse(text).detail).toMatch(new RegExp(`^${field.replace(/\./g, '\\.')}: `));
    }
  });
}
