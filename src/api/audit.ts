import type { FastifyRequest } from 'fastify';
import type { AuditEntry } from '../store/audit.js';

type RequestAudit = Omit<AuditEntry, 'actor' | 'actorType' | 'ipAddress' | 'userAgent'> & Partial<Pick<AuditEntry, 'actor' | 'actorType'>>;

/** Writes an audit entry for this request: actor from its credentials, client address and user agent. */
export async function audit(request: FastifyRequest, entry: RequestAudit): Promise<void> {
  const principal = request.principal;
  await request.server.services.store.audit.write({
    actor: entry.actor ?? principal?.actor ?? null,
    actorType: entry.actorType ?? (principal?.kind === 'api_key' ? 'api_key' : 'user'),
    ipAddress: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    ...entry,
  });
}
