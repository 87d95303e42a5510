import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { generateAgentToken } from '../../auth/tokens.js';
import { parseIpv4Network } from '../../core/net.js';
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
          'Run it where it can reach those networks: `netwarden agent --server <this server URL> --token <token>`.',
        body: NewAgent,
        response: { 201: CreatedAgent, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const session = requireSession(request, 'Creating an agent');
      const name = request.body.name.trim();
      if (!name) throw badRequest('name: must not be blank');
      const networks: string[] = [];
      for (const [i, text] of request.body.networks.entries()) {
        const parsed = parseIpv4Network(text.trim());
        if (!parsed.ok) throw badRequest(`networks.${i}: ${parsed.error}`);
        if (!networks.includes(parsed.value.cidr)) networks.push(parsed.value.cidr);
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
        summary: 'Revoke an agent',
        description: 'Its token stops working at once; its queued and running scans end as `failed`. Revoking twice changes nothing.',
        params: Type.Object({ agent_id: Id }),
        response: {
          200: Type.Object({ status: Type.Literal('revoked'), id: Type.Integer(), name: Type.String() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
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
