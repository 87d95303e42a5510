/** An agent as the API shows it (CONTRACT §12): the one definition for routes, store and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';
import { AGENT_NAME_MAX_LENGTH, AGENT_NETWORKS_MAX_ITEMS, AGENT_OFFLINE_AFTER_SECONDS } from '../core/limits.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const AGENT_STATUSES = ['online', 'offline'] as const;

export const AgentRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  networks: Type.Array(Type.String(), { description: 'IPv4 CIDR blocks the agent scans; a scan whose target lies in one of them is run by it' }),
  status: StringEnum(AGENT_STATUSES, { description: `online when heard from in the last ${AGENT_OFFLINE_AFTER_SECONDS} s` }),
  last_seen_at: Nullable(Timestamp),
  version: Nullable(Type.String({ description: "The agent's Netwarden version, as it reported it" })),
  hostname: Nullable(Type.String({ description: 'The host the agent runs on, as it reported it' })),
  engine: Nullable(Type.String({ description: 'The scan engine the agent has (nmap or native), as it reported it' })),
  token_prefix: Type.String({ description: 'First characters of its token, to recognise it' }),
  created_at: Timestamp,
});

export const NewAgent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: AGENT_NAME_MAX_LENGTH }),
    networks: Type.Array(Type.String({ maxLength: 18 }), { minItems: 1, maxItems: AGENT_NETWORKS_MAX_ITEMS }),
  },
  { additionalProperties: false },
);

export const CreatedAgent = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  networks: Type.Array(Type.String()),
  token: Type.String({ description: 'The agent token (`nwa_…`): shown only in this response' }),
});

export type AgentRecord = Static<typeof AgentRecord>;
export type NewAgent = Static<typeof NewAgent>;
export type CreatedAgent = Static<typeof CreatedAgent>;
