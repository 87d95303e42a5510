import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { generateAgentToken } from '../../auth/tokens.js';
import { networkWithin, parseIpv4Network, type Ipv4Network } from '../../core/net.js';
import { AgentRecord, CreatedAgent, NewAgent } from '../../schemas/agent.js';
import { toAgentRecord } from '../../store/agents.js';
import { isUniqueViolation } from '../../store/scans.js';
import { audit } from '../audit.js';
import { requireSession } from '../auth.js';
import { badRequest, notFound } from '../errors.js';
import { Id, errorResponses } from '../schemas.js';

/** Agents (CONTRACT §12): created and revoked by a logged-in user, listed with their status. */
export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, scans } = app.services;

  app.get(
    '/api/agents',
    {
      schema: {
        tags: ['agents'],
        summary: 'List agents with their status, version and last contact',
        description: 'Revoked agents are not listed. An agent is `online` when it was heard from in the last minute.',
        response: { 200: Type.Array(AgentRecord), ...errorResponses(401) },
      },
    },
    async () => {
      const now = Date.now();
      return (await store.agents.list()).map((row) => toAgentRecord(row, now));
    },
  );

  app.post(
    '/api/agents',
    {
      schema: {
        tags: ['agents'],
        summary: 'Create an agent (needs a session; its token is shown once)',
        description:
          'Scans whose target lies inside one of `networks` are routed to the agent: they wait in `queued` until it takes them. ' +
          'Run it where it can reach those networks: `netwarden agent --server <this server URL> --token <token>`. ' +
          'Each network must lie within the allowed scan targets (`scanning.allowed_targets`, or `NETWARDEN_SCAN_ALLOW` where set): `0.0.0.0/0` is refused. ' +
          "A network that overlaps another agent's (one holding the other, or the same) is refused (400 naming both): every address has at most one agent, so where a scan goes is never a choice.",
        body: NewAgent,
        response: { 201: CreatedAgent, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const session = requireSession(request, 'Creating an agent');
      const name = request.body.name.trim();
      if (!name) throw badRequest('name: must not be blank');
      const settings = await store.settings.get();
      const allowed = scans.allowedTargets(settings);
      const allowedNets = allowed.cidrs.flatMap((cidr) => {
        const p = parseIpv4Network(cidr);
        return p.ok ? [p.value] : [];
      });
      const others = (await store.agents.list()).flatMap((a) =>
        (JSON.parse(a.networks) as string[]).flatMap((cidr) => {
          const p = parseIpv4Network(cidr);
          return p.ok ? [{ agent: a.name, network: p.value }] : [];
        }),
      );
      const networks: string[] = [];
      for (const [i, text] of request.body.networks.entries()) {
        const parsed = parseIpv4Network(text.trim());
        if (!parsed.ok) throw badRequest(`networks.${i}: ${parsed.error}`);
        const net = parsed.value;
        if (!allowedNets.some((outer) => networkWithin(net, outer))) {
          throw badRequest(`networks.${i}: ${net.cidr} is outside the allowed scan targets (${allowed.source}: ${allowed.cidrs.join(', ')})`);
        }
        const clash = others.find((o) => overlaps(o.network, net));
        if (clash) {
          throw badRequest(
            `networks.${i}: ${net.cidr} overlaps ${clash.network.cidr} of agent '${clash.agent}'; each address may have one agent (revoke it or choose a network apart)`,
          );
        }
        if (!networks.includes(net.cidr)) networks.push(net.cidr);
      }
      const { key: token, prefix, hash } = generateAgentToken();
      let row;
      try {
        row = await store.agents.create({ name, networks, tokenPrefix: prefix, tokenHash: hash, createdBy: session.username });
      } catch (err) {
        if (isUniqueViolation(err)) throw badRequest(`name: an agent named '${name}' already exists`);
        throw err;
      }
      await audit(request, {
        action: 'agent_created',
        resourceType: 'agent',
        resourceId: row.id,
        success: true,
        details: { name, networks, prefix },
      });
      return reply.code(201).send({ id: row.id, name: row.name, networks, token });
    },
  );

  app.delete(
    '/api/agents/:agent_id',
    {
      schema: {
        tags: ['agents'],
        summary: 'Revoke an agent (needs a session)',
        description:
          'Its token stops working at once; its queued and running scans end as `failed`. Revoking twice changes nothing. ' +
          'Needs a logged-in session, as creating one does: an API key gets 403.',
        params: Type.Object({ agent_id: Id }),
        response: {
          200: Type.Object({ status: Type.Literal('revoked'), id: Type.Integer(), name: Type.String() }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      requireSession(request, 'Revoking an agent');
      const agent = await store.agents.get(request.params.agent_id);
      if (!agent) throw notFound('Agent');
      if (await store.agents.revoke(agent.id)) {
        const ended = await scans.agentRevoked(agent);
        await audit(request, {
          action: 'agent_revoked',
          resourceType: 'agent',
          resourceId: agent.id,
          success: true,
          details: { name: agent.name, prefix: agent.token_prefix, scans_failed: ended },
        });
      }
      return { status: 'revoked' as const, id: agent.id, name: agent.name };
    },
  );
};

/** Whether two CIDR blocks share an address (blocks either nest or are apart). */
function overlaps(a: Ipv4Network, b: Ipv4Network): boolean {
  return networkWithin(a, b) || networkWithin(b, a);
}
