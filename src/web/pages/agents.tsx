import { useEffect, useRef, useState } from 'preact/hooks';
import { AGENT_NAME_MAX_LENGTH, AGENT_NETWORKS_MAX_ITEMS, AGENT_OFFLINE_AFTER_SECONDS } from '../../core/limits.js';
import { answer, api } from '../api';
import { CopyText } from '../components/copy-text';
import {
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  PageHeader,
  RevokeButton,
  RevokeDialog,
  TableHead,
  Time,
  useRevoking,
} from '../components/ui';
import { plural } from '../format';
import { submitRunning, useAction, useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { NOT_A_NETWORK, isIpv4Network, parseList, withListEntry } from '../lists';
import type { Agent, Config, CreatedAgent, NewAgent } from '../types';
import './agents.css';

/** How often the list is asked for, so that statuses and last contacts stay current. */
const REFRESH_MS = 15_000;

/** The address agents reach this server at: server.public_url when set, else this page's origin. */
export function serverUrlOf(config: Config | undefined): string {
  const url = config?.server.public_url.trim() || window.location.origin;
  return url.replace(/\/+$/, '');
}

/**
 * Agents scan networks this server cannot reach (CONTRACT §12): the list with each one's status,
 * a form to add one (its token shown once, with the command that starts it), and revoking.
 */
export function AgentsPage() {
  useTitle('Agents');
  const agents = useResource((signal) => answer(api.GET('/api/agents', { signal })), []);
  const config = useResource((signal) => answer(api.GET('/api/config', { signal })), []);
  const [created, setCreated] = useState<CreatedAgent | null>(null);
  const revoking = useRevoking<Agent>((agent) => `Agent “${agent.name}” revoked.`, agents.reload);

  // Statuses change with time (an agent is offline after a minute of silence), not only with events.
  const reload = agents.reload;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  // An agent taking or finishing a scan has just been in contact.
  useRefreshOn(['scan_started', 'scan_finished'], reload);

  return (
    <>
      <PageHeader title="Agents" />
      <p class="muted">
        An agent scans networks this server cannot reach itself, such as another site, VLAN or cloud network. It runs <code>netwarden agent</code> on
        a machine inside those networks, connects out to this server (it needs no open port), takes the scans of its networks and sends back the
        results. Scans of an agent’s networks wait in the queue while it is offline.
      </p>
      {revoking.notice && <Notice kind="success">{revoking.notice}</Notice>}
      {created && <NewAgentToken created={created} serverUrl={serverUrlOf(config.data)} onDone={() => setCreated(null)} />}
      <section class="card" aria-labelledby="agent-list">
        <h2 id="agent-list">Agents</h2>
        <ErrorMessage error={agents.error} onRetry={agents.reload} />
        {agents.loading && !agents.data && <Loading label="Loading agents…" />}
        {agents.data?.length === 0 && (
          <EmptyState title="No agents yet">Add one below for each network this server cannot reach, then run it there.</EmptyState>
        )}
        {agents.data && agents.data.length > 0 && <AgentTable agents={agents.data} onRevoke={revoking.ask} />}
      </section>
      <CreateAgentForm
        onCreated={(agent) => {
          revoking.setNotice(null);
          setCreated(agent);
          agents.reload();
        }}
      />
      <RevokeDialog
        revoking={revoking}
        title="Revoke agent"
        label="Revoke agent"
        revoke={(agent) => api.DELETE('/api/agents/{agent_id}', { params: { path: { agent_id: agent.id } } })}
      >
        {(agent) => (
          <>
            “{agent.name}” (token <code>{agent.token_prefix}…</code>) stops working at once: its token is refused.{' '}
            <strong>Its queued and running scans will fail.</strong> Scans of its networks started later are run by this server again (or by another
            agent that covers them). This cannot be undone.
          </>
        )}
      </RevokeDialog>
    </>
  );
}

export function AgentStatusBadge({ agent }: { agent: Pick<Agent, 'status'> }) {
  return (
    <span
      class={`badge agent-${agent.status}`}
      title={
        agent.status === 'online'
          ? `Heard from in the last ${AGENT_OFFLINE_AFTER_SECONDS} seconds`
          : `Not heard from in the last ${AGENT_OFFLINE_AFTER_SECONDS} seconds: its scans wait in the queue`
      }
    >
      <span class={`status-dot${agent.status === 'online' ? ' online' : ''}`} aria-hidden="true" />
      {agent.status === 'online' ? 'Online' : 'Offline'}
    </span>
  );
}

function AgentTable({ agents, onRevoke }: { agents: Agent[]; onRevoke: (agent: Agent) => void }) {
  return (
    <div class="table-wrap">
      <table aria-label="Agents">
        <TableHead
          columns={['Name', 'Networks', 'Status', 'Last contact', 'Version', 'Host', 'Engine', 'Created']}
          hideNarrow={['Version', 'Host', 'Engine', 'Created']}
          actions
        />
        <tbody>
          {agents.map((agent) => (
            <tr key={agent.id}>
              <td class="wrap-anywhere">
                {agent.name}
                <div class="small muted">
                  token <code>{agent.token_prefix}…</code>
                </div>
              </td>
              <td>
                <ul class="agent-networks">
                  {agent.networks.map((network) => (
                    <li key={network} class="mono">
                      {network}
                    </li>
                  ))}
                </ul>
              </td>
              <td>
                <AgentStatusBadge agent={agent} />
              </td>
              <td>
                <Time iso={agent.last_seen_at} missing="never" />
              </td>
              <td class="hide-narrow">{agent.version ?? <span class="muted">—</span>}</td>
              <td class="hide-narrow wrap-anywhere">{agent.hostname ?? <span class="muted">—</span>}</td>
              <td class="hide-narrow">{agent.engine ?? <span class="muted">—</span>}</td>
              <td class="hide-narrow">
                <Time iso={agent.created_at} />
              </td>
              <td>
                <RevokeButton name={agent.name} small onClick={() => onRevoke(agent)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The checks the server makes on a new agent (routes/agents.ts and its schema), in its words, so
 * that a mistake is shown before sending. Returns the body to send.
 */
export function checkNewAgent(name: string, networksText: string): NewAgent {
  const trimmed = name.trim();
  if (!trimmed) throw new Error('name: must not be blank');
  if (trimmed.length > AGENT_NAME_MAX_LENGTH) throw new Error(`name: at most ${AGENT_NAME_MAX_LENGTH} characters`);
  const networks = parseList(networksText);
  if (networks.length === 0) throw new Error('networks: add at least one IPv4 network the agent scans, such as 192.168.20.0/24');
  if (networks.length > AGENT_NETWORKS_MAX_ITEMS) throw new Error(`networks: at most ${AGENT_NETWORKS_MAX_ITEMS} networks per agent`);
  const bad = networks.findIndex((n) => !isIpv4Network(n));
  if (bad >= 0) throw new Error(`networks.${bad}: ${NOT_A_NETWORK} (entry “${networks[bad]}”)`);
  return { name: trimmed, networks };
}

function CreateAgentForm({ onCreated }: { onCreated: (agent: CreatedAgent) => void }) {
  const [name, setName] = useState('');
  const [networks, setNetworks] = useState('');
  const create = useAction(async () => {
    const body = checkNewAgent(name, networks);
    const agent = await answer(api.POST('/api/agents', { body })).catch((err: unknown) => {
      throw withListEntry(err, { networks: body.networks });
    });
    setName('');
    setNetworks('');
    onCreated(agent);
  });
  const submit = submitRunning(create);

  return (
    <form class="card" onSubmit={submit} aria-label="Add an agent">
      <h2>Add an agent</h2>
      <Field label="Name" hint="Where it runs, such as branch-office or dmz.">
        <input name="name" maxLength={AGENT_NAME_MAX_LENGTH} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field
        label="Networks"
        hint="The IPv4 networks it scans, one per line (commas work too), such as 192.168.20.0/24. Scans whose target lies inside one of them are run by this agent, never by the server."
      >
        <textarea name="networks" rows={3} value={networks} placeholder="192.168.20.0/24" onInput={(e) => setNetworks(e.currentTarget.value)} />
      </Field>
      <ErrorMessage error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        {create.busy ? 'Adding…' : 'Add agent'}
      </button>
    </form>
  );
}

/** The new agent's token: its only appearance. It lives in the page's state: Done drops it. */
function NewAgentToken({ created, serverUrl, onDone }: { created: CreatedAgent; serverUrl: string; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.id]);
  return (
    <section class="card new-agent" aria-labelledby="new-agent-token">
      <h2 id="new-agent-token" tabIndex={-1} ref={heading}>
        Agent “{created.name}” added
      </h2>
      <p>
        It scans {plural(created.networks.length, 'network')}: <span class="mono">{created.networks.join(', ')}</span>. Copy its token now and start
        it on a machine inside those networks. <strong>The token will not be shown again</strong>: if you lose it, revoke the agent and add it again.
      </p>
      <CopyText label="Token" text={created.token} testId="new-agent-token" />
      <CopyText label="Command" text={`netwarden agent --server ${serverUrl} --token ${created.token}`} testId="new-agent-command" />
      <CopyText
        label="Command with the token in the environment"
        text={`NETWARDEN_AGENT_TOKEN=${created.token} netwarden agent --server ${serverUrl}`}
        testId="new-agent-env-command"
      />
      <p class="small muted">
        The second form keeps the token out of the process list. The agent needs Node.js and Netwarden installed (the same package as the server) and
        nmap for the best results. The server address comes from the public address in Settings, or this page’s address when none is set.
      </p>
      <div class="button-row">
        <button type="button" class="primary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
