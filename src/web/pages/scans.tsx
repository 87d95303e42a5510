import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_SCAN_PROFILE } from '../../core/model.js';
import { answer, api, asIs, fileBody, page, withQuery } from '../api';
import { ProfileSelect } from '../components/profile-select';
import { ProgressBar, ScanStatusBadge, isActive, scanFailure } from '../components/scan-status';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, Pager, Time } from '../components/ui';
import { formatDuration, formatNumber, humanize, plural } from '../format';
import { submitRunning, type Resource, useAction, useInterval, useResource, useTitle } from '../hooks';
import { useRefreshOn, useScanState } from '../live';
import { networksOverlap } from '../lists';
import type { Agent, Config, Scan, ScanProfile, ScanProgress, ScanStarted, ScanState } from '../types';

const PAGE_SIZE = 25;
/** How often the history is asked for while a scan is queued or running and the event stream is down. */
const HISTORY_POLL_MS = 2000;
/**
 * The queue is read from the newest scans (GET /api/scans lists newest first and has no status
 * filter): queued scans older than this many scans are not listed in it.
 */
const QUEUE_WINDOW = 200;

/** Agents by id, to name the agent a queued scan waits for. */
type AgentNames = ReadonlyMap<number, Agent>;

/**
 * Scans in one place: start one (or follow and cancel the running one) at the top, the result of
 * the scan just watched, and the history below with queued scans and their cancel buttons.
 * `?scan=<id>` shows that scan's result (the set-up wizard links here after the first scan).
 */
export function ScansPage() {
  useTitle('Scans');
  const { query, path, route } = useLocation();
  const offset = /^\d+$/.test(query.offset ?? '') ? Number(query.offset) : 0;
  const linked = /^\d+$/.test(query.scan ?? '') ? Number(query.scan) : null;
  const [resultId, setResultId] = useState<number | null>(linked);
  useEffect(() => setResultId(linked), [linked]);

  const config = useResource((signal) => answer(api.GET('/api/config', { signal })), []);
  const history = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: PAGE_SIZE, offset } }, signal })), [offset]);
  const recent = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: QUEUE_WINDOW } }, signal })), []);
  // Only to name agents: without them (an older server, say) a queued scan names the agent's id.
  const agents = useResource((signal) => answer(api.GET('/api/agents', { signal })).catch((): Agent[] => []), []);
  const agentNames: AgentNames = new Map((agents.data ?? []).map((a) => [a.id, a]));
  const reloadLists = () => {
    history.reload();
    recent.reload();
  };
  const scan = useScanState((id) => {
    setResultId(id);
    reloadLists();
  });
  const { live } = useRefreshOn(['scan_queued', 'scan_started', 'scan_finished'], () => {
    reloadLists();
    agents.reload();
  });
  const queued = (recent.data?.items ?? []).filter((s) => s.status === 'queued').sort((a, b) => a.scan_id - b.scan_id);
  const anyActive = (history.data?.items.some(isActive) ?? false) || queued.length > 0;
  useInterval(reloadLists, HISTORY_POLL_MS, !live && anyActive);

  // GET /api/scan/status names the next queued scan when none runs: one that waits (for an
  // offline agent, say) is shown in the queue, and does not take the place of the start form.
  const waiting =
    scan.state?.progress === null &&
    [...queued, ...(history.data?.items ?? [])].some((s) => s.scan_id === scan.state?.scan_id && s.status === 'queued');
  const running = (scan.state?.scanning ?? false) && !waiting;
  // With parallel scans, another one may start while this one runs.
  const parallel = (config.data?.scanning.max_parallel_scans ?? 1) > 1;
  const setOffset = (next: number) => route(withQuery(path, { offset: next || undefined }), true);

  return (
    <>
      <PageHeader title="Scans" />
      <ErrorMessage error={scan.error} onRetry={scan.reload} />
      {running && scan.state && (
        // Live, the scan_finished event ends it; without the stream, ask at once.
        <RunningScan state={scan.state} onCancelled={scan.live ? undefined : scan.reload} />
      )}
      {(!running || parallel) && (
        <StartForm
          config={config.data}
          configError={config.error}
          onStarted={(started) => {
            setResultId(null);
            scan.started(started.scan_id, started.subnet, started.profile);
            reloadLists();
          }}
        />
      )}
      <ImportForm
        onImported={(imported) => {
          setResultId(imported.scan_id);
          reloadLists();
        }}
      />
      {!running && resultId !== null && <ScanResult scanId={resultId} agents={agentNames} />}
      <Queue
        queued={queued}
        running={(recent.data?.items ?? []).filter((s) => s.status === 'running')}
        maxParallel={config.data?.scanning.max_parallel_scans}
        error={recent.error}
        onRetry={recent.reload}
        complete={recent.data ? recent.data.total <= QUEUE_WINDOW : true}
        agents={agentNames}
        onCancelled={reloadLists}
      />
      <History history={history} offset={offset} onPage={setOffset} running={scan.state} agents={agentNames} />
    </>
  );
}

function StartForm({ config, configError, onStarted }: { config?: Config; configError: unknown; onStarted: (started: ScanStarted) => void }) {
  const [profile, setProfile] = useState<ScanProfile | null>(null);
  const [subnet, setSubnet] = useState('');
  // Not chosen here: the server scans with scanning.default_profile, which the select shows.
  const chosen = profile ?? config?.scanning.default_profile ?? DEFAULT_SCAN_PROFILE;

  const start = useAction(async () => {
    const started = await answer(
      api.POST('/api/scan/trigger', { params: { query: { profile: profile ?? undefined, subnet: subnet.trim() || undefined } } }),
    );
    onStarted(started);
  });
  const submit = submitRunning(start);

  return (
    <form class="card" onSubmit={submit} aria-label="Start a scan">
      <h2>Start a scan</h2>
      <ErrorMessage error={configError} />
      <ErrorMessage error={start.error} />
      <div class="grid-2">
        <ProfileSelect value={chosen} onChange={setProfile} />
        <Field
          label="Subnet"
          hint={
            config ? (
              <>
                Leave empty to scan <span class="mono">{config.network.subnet}</span> (from <a href="/settings/network">Settings</a>). A CIDR such as
                192.168.1.0/24 or one address.
              </>
            ) : (
              'A CIDR such as 192.168.1.0/24 or one address.'
            )
          }
        >
          <input
            name="subnet"
            value={subnet}
            placeholder={config?.network.subnet ?? '192.168.1.0/24'}
            onInput={(e) => setSubnet(e.currentTarget.value)}
          />
        </Field>
      </div>
      <button type="submit" class="primary" disabled={start.busy}>
        {start.busy ? 'Starting…' : 'Start scan'}
      </button>
    </form>
  );
}

/** The largest report the server accepts (POST /api/scans/import): checked here first, to say so at once. */
const IMPORT_MAX_BYTES = 50 * 1024 * 1024;

/** An nmap XML report (nmap -oX) brought in as a completed scan: POST /api/scans/import with the file. */
function ImportForm({ onImported }: { onImported: (scan: Scan) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [inputKey, setInputKey] = useState(0);
  const upload = useAction(async () => {
    if (!file) return;
    if (file.size > IMPORT_MAX_BYTES) throw new Error(`${file.name} is larger than the 50 MiB an import accepts.`);
    const scan = await answer(
      api.POST('/api/scans/import', { body: fileBody(file), bodySerializer: asIs, headers: { 'Content-Type': 'application/xml' } }),
    );
    setFile(null);
    // A new input: the same file can be chosen again.
    setInputKey((k) => k + 1);
    onImported(scan);
  });
  const submit = submitRunning(upload);
  return (
    <form class="card" onSubmit={submit} aria-label="Import nmap report">
      <h2>Import nmap report</h2>
      <ErrorMessage error={upload.error} />
      <Field
        label="Report file"
        hint={
          <>
            The XML file <span class="mono">nmap -oX FILE</span> wrote (up to 50 MiB). It becomes a completed scan: devices, ports, risk, CVEs and the
            changes since the previous scan of the same subnet.
          </>
        }
      >
        <input
          key={inputKey}
          type="file"
          name="report"
          accept=".xml,application/xml,text/xml"
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
      </Field>
      <button type="submit" disabled={!file || upload.busy}>
        {upload.busy ? 'Importing…' : 'Import report'}
      </button>
    </form>
  );
}

/**
 * The elapsed time and time left of `progress`, moving every second between progress events:
 * counted on from when the last event arrived (the next event corrects them).
 */
function useMovingTimes(progress: ScanProgress | null): { elapsed: number | null; left: number | null } {
  const [received, setReceived] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => setReceived(Date.now()), [progress]);
  useInterval(() => setNow(Date.now()), 1000, progress !== null);
  if (!progress) return { elapsed: null, left: null };
  const since = Math.max(0, (now - received) / 1000);
  return {
    elapsed: progress.elapsed_seconds + since,
    // Counting down, but never claiming "done" before the scan says so.
    left: progress.eta_seconds === null ? null : Math.max(1, progress.eta_seconds - since),
  };
}

function RunningScan({ state, onCancelled }: { state: ScanState; onCancelled?: () => void }) {
  const progress = state.progress;
  const times = useMovingTimes(progress);
  const cancel = useAction(async () => {
    if (state.scan_id === null) return;
    await api.POST('/api/scans/{scan_id}/cancel', { params: { path: { scan_id: state.scan_id } } });
    onCancelled?.();
  });

  return (
    <section class="card" aria-live="polite" aria-label="Running scan">
      <h2>
        Scanning <span class="mono">{state.subnet}</span>
      </h2>
      <ErrorMessage error={cancel.error} />
      <ProgressBar progress={progress} />
      <dl class="facts">
        <dt>Profile</dt>
        <dd>{state.profile}</dd>
        <dt>Phase</dt>
        <dd>{progress ? humanize(progress.phase) : 'Starting'}</dd>
        <dt>Hosts</dt>
        <dd>{hostsText(progress)}</dd>
        {progress?.current_host && (
          <>
            <dt>Now checking</dt>
            <dd class="mono">{progress.current_host}</dd>
          </>
        )}
        <dt>Elapsed</dt>
        <dd>{formatDuration(times.elapsed)}</dd>
        <dt>Time left</dt>
        <dd>{times.left === null ? 'estimating…' : `about ${formatDuration(Math.round(times.left))}`}</dd>
      </dl>
      <button type="button" class="danger" disabled={cancel.busy} onClick={() => void cancel.run()}>
        {cancel.busy ? 'Cancelling…' : 'Cancel scan'}
      </button>
    </section>
  );
}

function hostsText(progress: ScanProgress | null): string {
  if (!progress) return '—';
  const found = plural(progress.hosts_found, 'device') + ' found';
  if (progress.hosts_total === null) return found;
  // While discovery runs the total is the addresses checked; after it, the devices being scanned
  // (nmap writes a device's results when its group of devices is done).
  if (progress.phase === 'queued' || progress.phase === 'discovery') return `${found} among ${plural(progress.hosts_total, 'address', 'addresses')}`;
  return `${formatNumber(progress.hosts_done)} of ${plural(progress.hosts_total, 'device')} scanned, ${found}`;
}

/** How many of a scan's changes are read for its summary (more are counted from the total). */
const SUMMARY_CHANGES = 1000;

/** What a completed scan found, at a glance: devices, changes, and the new risks among them (high or critical changes). */
function ResultSummary({ scan }: { scan: Scan }) {
  const changes = useResource(
    (signal) => page(api.GET('/api/changes', { params: { query: { scan_id: scan.scan_id, limit: SUMMARY_CHANGES } }, signal })),
    [scan.scan_id],
  );
  if (!changes.data) return null;
  const items = changes.data.items;
  const added = items.filter((c) => c.change_type === 'device_added').length;
  const risks = items.filter((c) => c.severity === 'critical' || c.severity === 'high').length;
  return (
    <ul class="result-summary" aria-label="What the scan found">
      <li>
        <strong>{formatNumber(scan.devices_found)}</strong> {scan.devices_found === 1 ? 'device' : 'devices'}
        {added > 0 && <span class="muted"> ({added} new)</span>}
      </li>
      <li>
        <strong>{formatNumber(changes.data.total)}</strong> {changes.data.total === 1 ? 'change' : 'changes'}
      </li>
      <li class={risks > 0 ? 'has-risks' : undefined}>
        <strong>{formatNumber(risks)}</strong> new {risks === 1 ? 'risk' : 'risks'}
      </li>
    </ul>
  );
}

/** The outcome of the scan just watched (or linked to), with where to look next. */
function ScanResult({ scanId, agents }: { scanId: number; agents: AgentNames }) {
  const scan = useResource((signal) => answer(api.GET('/api/scans/{scan_id}', { params: { path: { scan_id: scanId } }, signal })), [scanId]);
  if (scan.error) return <ErrorMessage error={scan.error} onRetry={scan.reload} />;
  if (!scan.data) return <Loading />;
  const s = scan.data;
  const failure = scanFailure(s);
  return (
    <section class="card" aria-label="Scan result">
      <h2>Scan #{s.scan_id}</h2>
      <p>
        The {s.scan_type === 'device' ? 'device' : 'network'} scan of <span class="mono">{s.target ?? s.subnet}</span>{' '}
        <ScanStatusBadge status={s.status} /> <Time iso={s.completed_at ?? s.started_at} />.
      </p>
      {failure && <ErrorMessage error={new Error(failure)} />}
      {s.status === 'completed' && <ResultSummary scan={s} />}
      <dl class="facts">
        <dt>Profile</dt>
        <dd>{s.profile}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(s.duration_seconds)}</dd>
        <dt>Devices found</dt>
        <dd>{formatNumber(s.devices_found)}</dd>
        <dt>Started by</dt>
        <dd>{s.triggered_by ?? '—'}</dd>
        <dt>Run by</dt>
        <dd>
          <RunnerText scan={s} agents={agents} />
        </dd>
      </dl>
      {s.warnings.length > 0 && (
        <div class="alert alert-warning" role="note" aria-label="Warnings">
          <div>
            <strong>{plural(s.warnings.length, 'warning')}</strong>: problems that did not stop the scan.
            <ul>
              {s.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
          </div>
        </div>
      )}
      <div class="button-row">
        <a class="button" href={`/devices?scan_id=${s.scan_id}`}>
          View devices
        </a>
        <a class="button" href={`/changes?scan_id=${s.scan_id}`}>
          View changes
        </a>
        {s.status === 'completed' && (
          <a class="button" href={`/compare?current=${s.scan_id}`}>
            Compare with previous
          </a>
        )}
      </div>
    </section>
  );
}

interface HistoryProps {
  history: Resource<{ items: Scan[]; total: number }>;
  offset: number;
  onPage: (offset: number) => void;
  /** The running scan as events report it: fresher progress than the list's. */
  running: ScanState | undefined;
  agents: AgentNames;
}

function History({ history, offset, onPage, running, agents }: HistoryProps) {
  const data = history.data;
  return (
    <section class="card" aria-labelledby="scan-history">
      <h2 id="scan-history">History</h2>
      <ErrorMessage error={history.error} onRetry={history.reload} />
      {history.loading && !data && <Loading />}
      {data?.total === 0 && (
        <EmptyState title="No scans yet">
          Start a scan above to find the devices on your network. Every scan is listed here with its result.
        </EmptyState>
      )}
      {data && data.items.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Scan history">
            <thead>
              <tr>
                <th class="num">#</th>
                <th>Started</th>
                <th>Target</th>
                <th>Status</th>
                <th>Run by</th>
                <th class="hide-narrow">Profile</th>
                <th class="hide-narrow">Started by</th>
                <th class="num hide-narrow">Duration</th>
                <th class="num">Devices</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((s) => (
                <ScanRow
                  key={s.scan_id}
                  scan={s}
                  progress={running?.scanning && running.scan_id === s.scan_id ? running.progress : s.progress}
                  agents={agents}
                  onCancelled={history.reload}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && <Pager total={data.total} limit={PAGE_SIZE} offset={offset} onChange={onPage} />}
    </section>
  );
}

function ScanRow({
  scan,
  progress,
  agents,
  onCancelled,
}: {
  scan: Scan;
  progress: ScanProgress | null;
  agents: AgentNames;
  onCancelled: () => void;
}) {
  const active = isActive(scan);
  const failure = scanFailure(scan);
  const cancel = useAction(async () => {
    await api.POST('/api/scans/{scan_id}/cancel', { params: { path: { scan_id: scan.scan_id } } });
    onCancelled();
  });
  return (
    <tr>
      <td class="num">
        <a href={`/scans?scan=${scan.scan_id}`} aria-label={`Scan #${scan.scan_id} details`}>
          {scan.scan_id}
        </a>
      </td>
      <td>{scan.status === 'queued' ? <span class="muted">waiting</span> : <Time iso={scan.started_at} />}</td>
      <td>
        <span class="mono">{scan.target ?? scan.subnet}</span>
        {scan.scan_type === 'device' && <span class="muted small"> (one device)</span>}
      </td>
      <td>
        <ScanStatusBadge status={scan.status} />
        {scan.status === 'running' && progress && <span class="small muted"> {Math.round(progress.percent)}%</span>}
        {failure && <div class="small error-text">{failure}</div>}
        <WarningsBadge warnings={scan.warnings} />
      </td>
      <RunCells scan={scan} agents={agents} />
      <td class="num hide-narrow">{formatDuration(scan.duration_seconds)}</td>
      <td class="num">{active ? '—' : formatNumber(scan.devices_found)}</td>
      <td>
        <span class="button-row">
          {active ? (
            <button
              type="button"
              class="small-button"
              aria-label={`Cancel scan #${scan.scan_id}`}
              disabled={cancel.busy}
              onClick={() => void cancel.run()}
            >
              {cancel.busy ? 'Cancelling…' : 'Cancel'}
            </button>
          ) : (
            <>
              <a href={`/devices?scan_id=${scan.scan_id}`}>Devices</a>
              <a href={`/changes?scan_id=${scan.scan_id}`}>Changes</a>
              {scan.status === 'completed' && (
                <a href={`/compare?current=${scan.scan_id}`} aria-label={`Compare scan #${scan.scan_id} with the previous one`}>
                  Compare
                </a>
              )}
            </>
          )}
        </span>
        <ErrorMessage error={cancel.error} />
      </td>
    </tr>
  );
}

/** A scan row's "Run by", profile and "Triggered by" cells. */
function RunCells({ scan, agents, waitsFor }: { scan: Scan; agents: AgentNames; waitsFor?: string | undefined }) {
  return (
    <>
      <td>
        <RunnerText scan={scan} agents={agents} waitsFor={waitsFor} />
      </td>
      <td class="hide-narrow">{scan.profile}</td>
      <td class="hide-narrow">{scan.triggered_by ?? '—'}</td>
    </>
  );
}

/**
 * Who runs or ran a scan (`server <name>`, `worker <name>`, `agent <name>`), or, while it is queued, who it waits
 * for: the agent whose networks hold its target (and whether that agent is offline), else a worker.
 */
function RunnerText({
  scan,
  agents,
  waitsFor,
}: {
  scan: Pick<Scan, 'status' | 'runner' | 'agent_id'>;
  agents: AgentNames;
  /** What a queued scan waits for, from the queue (waitReason); without it, its line. */
  waitsFor?: string | undefined;
}) {
  if (scan.status === 'queued') {
    if (scan.agent_id === null) return <span class="muted">{waitsFor ?? 'next to start'}</span>;
    const agent = agents.get(scan.agent_id);
    return (
      <span class="muted">
        waiting for agent {agent ? agent.name : `#${scan.agent_id}`}
        {agent?.status === 'offline' && <span class="small"> (offline)</span>}
        {waitsFor && <span class="small">; {waitsFor}</span>}
      </span>
    );
  }
  if (!scan.runner) return <span class="muted">—</span>;
  // A `netwarden serve` process is this server to whoever reads its pages; its process name is in the tooltip.
  if (scan.runner.startsWith('server '))
    return (
      <span class="runner" title={scan.runner}>
        this server
      </span>
    );
  return <span class="runner">{scan.runner}</span>;
}

/** The target of a scan as a network: its device's address for a single-device scan. */
function targetOf(scan: Pick<Scan, 'target' | 'subnet'>): string {
  return scan.target ?? scan.subnet;
}

/**
 * What keeps a queued scan waiting, in words: a running or older queued scan over the same
 * addresses ("waits for scan #7"), the scan ahead of it in its line, or every parallel place
 * taken. Undefined when nothing visible holds it (it starts next).
 */
export function waitReason(scan: Scan, ahead: Scan[], running: Scan[], maxParallel: number | undefined): string | undefined {
  const overlapping = [...running, ...ahead].find((other) => networksOverlap(targetOf(other), targetOf(scan)));
  if (overlapping) return `waits for scan #${overlapping.scan_id}${overlapping.status === 'running' ? ' (running)' : ''}`;
  const before = ahead.filter((other) => other.agent_id === scan.agent_id).at(-1);
  if (before) return `waits for scan #${before.scan_id}`;
  if (maxParallel !== undefined && running.length >= maxParallel) return `waits for a free place (${running.length} of ${maxParallel} running)`;
  return undefined;
}

/** Problems that did not stop a scan: a badge, its tooltip listing them (the scan's page shows them in full). */
function WarningsBadge({ warnings }: { warnings: string[] }) {
  if (warnings.length === 0) return null;
  return (
    <div>
      <span class="badge scan-warnings" title={warnings.join('\n')}>
        {plural(warnings.length, 'warning')}
      </span>
      <span class="visually-hidden">: {warnings.join('; ')}</span>
    </div>
  );
}

/** Position in line: 1st, 2nd, 3rd… */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/**
 * The queued scans in the order they were asked for. Each waits in its own line: the server's
 * workers, or the agent whose networks hold its target; its position is its place in that line
 * (a scan also waits while its target overlaps a running or older queued scan, or every parallel
 * place is taken).
 */
function Queue({
  queued,
  running,
  maxParallel,
  error,
  onRetry,
  complete,
  agents,
  onCancelled,
}: {
  queued: Scan[];
  /** The running scans: a queued scan over the same addresses waits for them. */
  running: Scan[];
  maxParallel: number | undefined;
  error: unknown;
  onRetry: () => void;
  /** False when older scans than those read exist: a queued one among them is not listed. */
  complete: boolean;
  agents: AgentNames;
  onCancelled: () => void;
}) {
  const seen = new Map<number | null, number>();
  const positions = queued.map((s) => {
    const n = (seen.get(s.agent_id) ?? 0) + 1;
    seen.set(s.agent_id, n);
    return n;
  });
  return (
    <section class="card" aria-labelledby="scan-queue">
      <h2 id="scan-queue">Queue</h2>
      <ErrorMessage error={error} onRetry={onRetry} />
      {queued.length === 0 ? (
        <p class="muted">No scan is waiting.</p>
      ) : (
        <div class="table-wrap">
          <table aria-label="Scan queue">
            <thead>
              <tr>
                <th>Position</th>
                <th class="num">#</th>
                <th>Target</th>
                <th>Waiting for</th>
                <th class="hide-narrow">Profile</th>
                <th class="hide-narrow">Started by</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {queued.map((s, i) => (
                <QueueRow
                  key={s.scan_id}
                  scan={s}
                  position={positions[i]}
                  agents={agents}
                  waitsFor={waitReason(s, queued.slice(0, i), running, maxParallel)}
                  onCancelled={onCancelled}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!complete && <p class="small muted">Only the latest {QUEUE_WINDOW} scans are looked at for queued ones.</p>}
    </section>
  );
}

function QueueRow({
  scan,
  position,
  agents,
  waitsFor,
  onCancelled,
}: {
  scan: Scan;
  position: number;
  agents: AgentNames;
  waitsFor: string | undefined;
  onCancelled: () => void;
}) {
  const cancel = useAction(async () => {
    await api.POST('/api/scans/{scan_id}/cancel', { params: { path: { scan_id: scan.scan_id } } });
    onCancelled();
  });
  return (
    <tr>
      <td>{ordinal(position)}</td>
      <td class="num">{scan.scan_id}</td>
      <td>
        <span class="mono">{scan.target ?? scan.subnet}</span>
      </td>
      <RunCells scan={scan} agents={agents} waitsFor={waitsFor} />
      <td>
        <button
          type="button"
          class="small-button"
          aria-label={`Cancel queued scan #${scan.scan_id}`}
          disabled={cancel.busy}
          onClick={() => void cancel.run()}
        >
          {cancel.busy ? 'Cancelling…' : 'Cancel'}
        </button>
        <ErrorMessage error={cancel.error} />
      </td>
    </tr>
  );
}

/** `/scan` (the old Scan page, in bookmarks and old links) is now the top of `/scans`. */
export function ScanRedirect() {
  const { route, query } = useLocation();
  useEffect(() => route(withQuery('/scans', query), true), [route, query]);
  return null;
}
