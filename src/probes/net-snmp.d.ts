/**
 * The part of net-snmp (MIT, no bundled types) the SNMP probe and its tests use: a v2c session's
 * get and getBulk, and the agent with scalar and table providers that the tests answer with.
 */
declare module 'net-snmp' {
  import type { EventEmitter } from 'node:events';

  export interface Varbind {
    oid: string;
    type: number;
    value: unknown;
  }

  export interface SessionOptions {
    port?: number;
    retries?: number;
    timeout?: number;
    transport?: 'udp4' | 'udp6';
    version?: number;
    /** A dgram-compatible module: how a session's socket is made. */
    dgramModule?: { createSocket(type: 'udp4' | 'udp6'): import('node:dgram').Socket };
  }

  export interface Session extends EventEmitter {
    get(oids: string[], callback: (error: Error | null, varbinds?: Varbind[]) => void): void;
    getBulk(oids: string[], nonRepeaters: number, maxRepetitions: number, callback: (error: Error | null, varbinds?: Varbind[]) => void): void;
    cancelRequests(error: Error): void;
    close(): void;
  }

  export interface MibRequest {
    instanceNode: { value: unknown };
    done(): void;
  }

  export interface ScalarProvider {
    name: string;
    type: number;
    oid: string;
    scalarType: number;
    maxAccess: number;
    handler?: (request: MibRequest) => void;
  }

  export interface TableProvider {
    name: string;
    type: number;
    oid: string;
    maxAccess: number;
    tableColumns: { number: number; name: string; type: number; maxAccess: number }[];
    tableIndex: { columnName: string; implied?: boolean; length?: number }[];
  }

  export interface Mib {
    registerProvider(provider: ScalarProvider | TableProvider): void;
    addTableRow(name: string, row: unknown[]): void;
    setScalarValue(name: string, value: unknown): void;
  }

  export interface Authorizer {
    addCommunity(community: string): void;
  }

  export interface Agent {
    getMib(): Mib;
    getAuthorizer(): Authorizer;
    close(callback?: () => void): void;
  }

  export interface AgentOptions {
    port?: number;
    address?: string | null;
    transport?: 'udp4' | 'udp6';
    disableAuthorization?: boolean;
    engineID?: string;
  }

  export function createSession(target: string, community: string, options?: SessionOptions): Session;
  export function createAgent(options: AgentOptions, callback: (error: Error | null, data: unknown) => void): Agent;
  export function isVarbindError(varbind: Varbind): boolean;

  export const Version1: number;
  export const Version2c: number;
  export const ObjectType: Record<'OctetString' | 'OID' | 'Integer' | 'TimeTicks' | 'Counter' | 'Gauge' | 'IpAddress', number>;
  export const MibProviderType: Record<'Scalar' | 'Table', number>;
  export const MaxAccess: Record<'read-only' | 'read-write' | 'not-accessible', number>;

  const snmp: {
    createSession: typeof createSession;
    createAgent: typeof createAgent;
    isVarbindError: typeof isVarbindError;
    Version1: number;
    Version2c: number;
    ObjectType: typeof ObjectType;
    MibProviderType: typeof MibProviderType;
    MaxAccess: typeof MaxAccess;
  };
  export default snmp;
}
