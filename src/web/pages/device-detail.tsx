import { useRoute } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ACCEPTANCE_REASON_MAX_LENGTH, DEVICE_LABEL_MAX_LENGTH, DEVICE_NOTES_MAX_LENGTH } from '../../core/limits.js';
import { NAME_SOURCE_LABELS } from '../../core/model.js';
import { ApiError, answer, api, page } from '../api';
import { SaveCancelButtons } from '../components/form-parts';
import { TimelineCard } from '../components/timeline-strip';
import { Dialog, EmptyState, ErrorMessage, Field, Loading, Notice, PageHeader, RiskBadge, SeverityBadge, StaleMarker, Time } from '../components/ui';
import { formatDateTime, missingText, plural } from '../format';
import { isActive } from '../components/scan-status';
import { coverageOf, describePorts, type Coverage } from '../coverage';
import { useEvents } from '../events';
import { submitRunning, useAction, useInterval, useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { TypeIcon, typeLabel } from '../components/type-icon';
import { SEVERITIES, isOneOf, type Cve, type DeviceDetail, type Finding, type Port, type Scan, type Severity } from '../types';

/** The API states findings' and CVEs' severities as plain strings; anything unexpected shows as info. */
const severityOf = (text: string): Severity => (isOneOf(SEVERITIES, text) ? text : 'info');
import './devices.css';
import './risk.css';

const CHANGES_PAGE = 10;
const REFERENCES_SHOWN = 3;

/** One device: facts, risk, ports, findings, CVEs and history; edit its own fields, scan it again. */
export function DeviceDetailPage() {
  const { params } = useRoute();
  const raw = params.id ?? '';
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
  // Keyed by id: going from one device to another starts with a clean slate (no half-done edit).
  return id > 0 ? <DeviceView key={id} id={id} /> : <NotFound id={raw} />;
}

function NotFound({ id }: { id: string }) {
  useTitle('Device not found');
  return (
    <>
      <PageHeader title="Device not found" />
      <p>
        No device with id {id}. It may never have existed, or the link is mistyped. <a href="/devices">Back to the device list</a>
      </p>
    </>
  );
}

function DeviceView({ id }: { id: number }) {
  const device = useResource((signal) => answer(api.GET('/api/devices/{device_id}', { params: { path: { device_id: id } }, signal })), [id]);
  // What a save answered, shown until the reload it triggers arrives.
  const [saved, setSaved] = useState<DeviceDetail | null>(null);
  useEffect(() => setSaved(null), [device.data]);
  const [editing, setEditing] = useState(false);
  const [changesVersion, setChangesVersion] = useState(0);
  const editButton = useRef<HTMLButtonElement>(null);
  const scan = useDeviceScan(device.data?.ip_address ?? '', () => {
    device.reload();
    setChangesVersion((v) => v + 1);
  });
  // Another scan (a schedule's, someone else's) that updates this device shows without a reload.
  useRefreshOn(['device_updated'], device.reload, (event) => event.name === 'device_updated' && event.data.id === id);
  const coverage = device.data ? coverageOf(device.data) : null;

  const d = saved ?? device.data;
  const name = d ? d.name || d.hostname || d.ip_address : '';
  useTitle(name || 'Device');

  if (device.error instanceof ApiError && device.error.status === 404) return <NotFound id={String(id)} />;
  if (!d) {
    return (
      <>
        <BackLink />
        <ErrorMessage error={device.error} onRetry={device.reload} />
        {!device.error && <Loading label="Loading device…" />}
      </>
    );
  }

  const stopEditing = () => {
    setEditing(false);
    // Back to where the keyboard was before the form opened.
    setTimeout(() => editButton.current?.focus());
  };

  return (
    <div class="device-detail">
      <BackLink />
      <PageHeader title={name}>
        <button type="button" ref={editButton} disabled={editing} onClick={() => setEditing(true)}>
          Edit
        </button>
        <button type="button" disabled={scan.busy || scan.running} onClick={scan.start}>
          Scan this device
        </button>
      </PageHeader>
      {name !== d.ip_address && <p class="subtitle mono">{d.ip_address}</p>}
      <ScanMessages run={scan.run} error={scan.error} />
      {/* A failed reload keeps the last answer on screen, with the error above it. */}
      <ErrorMessage error={device.error} onRetry={device.reload} />
      {editing && (
        <EditForm
          device={d}
          onCancel={stopEditing}
          onSaved={(updated) => {
            setSaved(updated);
            device.reload();
            stopEditing();
          }}
        />
      )}
      {/* The source order is the phone's: what needs doing (risk, findings) before the facts,
          which are often mostly "Unknown". devices.css places them side by side on wider screens. */}
      <div class="device-sections">
        <RiskSummary device={d} coverage={coverage} />
        <StatusCard device={d} onSaved={(updated) => setSaved(updated)} />
        <FindingsCard deviceId={d.id} findings={d.risk_details.findings} cves={d.cves} onChanged={device.reload} />
        <Facts device={d} />
        <IdentityCard device={d} />
        <PortsCard ports={d.ports} />
        <CvesCard cves={d.cves} />
        <TimelineCard deviceId={d.id} version={changesVersion} />
        <ChangeHistory deviceId={d.id} version={changesVersion} />
        <IpHistory history={d.ip_history} />
      </div>
    </div>
  );
}

/** Missed network scans in a row a device that "can sleep" may take before it counts as offline. */
const SLEEP_CHOICES = [2, 3, 5, 10, 24];

/**
 * Where the device stands in the daily loop (CONTRACT §17): new, known or archived, with the
 * button that moves it on; which presence changes are announced (watch); and "can sleep", its own
 * presence threshold, so a phone that misses a scan while asleep is not reported gone.
 */
function StatusCard({ device: d, onSaved }: { device: DeviceDetail; onSaved: (device: DeviceDetail) => void }) {
  const path = { params: { path: { device_id: d.id } } };
  type Body = { status?: 'known' | 'archived'; watch?: { offline?: boolean; online?: boolean }; presence?: { offline_after_scans: number | null } };
  const save = useAction(async (body: Body) => {
    onSaved(await answer(api.PUT('/api/devices/{device_id}', { ...path, body })));
  });
  const acknowledge = useAction(async () => {
    onSaved(await answer(api.POST('/api/devices/{device_id}/acknowledge', path)));
  });
  const busy = save.busy || acknowledge.busy;
  const own = d.presence.offline_after_scans;
  const choices = own !== null && !SLEEP_CHOICES.includes(own) ? [...SLEEP_CHOICES, own].sort((a, b) => a - b) : SLEEP_CHOICES;
  const statusText = { new: 'New: not acknowledged yet', known: 'Known', archived: 'Archived: left out of lists, stats and alerts' }[d.status];
  return (
    <section class="card status-card" aria-label="Status and watching">
      <h2>Status and watching</h2>
      <p>
        {d.status === 'new' && <span class="badge new">New</span>}
        {d.status === 'archived' && <span class="badge archived">Archived</span>} <span class="status-text">{statusText}</span>
      </p>
      <div class="button-row">
        {d.status !== 'known' && (
          <button type="button" class={d.status === 'new' ? 'primary' : undefined} disabled={busy} onClick={() => void acknowledge.run()}>
            {d.status === 'new' ? 'Acknowledge' : 'Restore (known)'}
          </button>
        )}
        {d.status !== 'archived' && (
          <button type="button" disabled={busy} onClick={() => void save.run({ status: 'archived' })}>
            Archive
          </button>
        )}
      </div>
      <fieldset class="plain">
        <legend>Tell me when it</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={d.watch.offline}
            disabled={busy}
            onChange={(e) => void save.run({ watch: { offline: e.currentTarget.checked } })}
          />
          goes offline
        </label>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={d.watch.online}
            disabled={busy}
            onChange={(e) => void save.run({ watch: { online: e.currentTarget.checked } })}
          />
          comes back online
        </label>
      </fieldset>
      <Field
        label="Can sleep"
        hint="A phone or laptop that sleeps misses scans without being gone: it counts as offline only after this many network scans in a row missed it."
      >
        <select
          value={own === null ? '' : String(own)}
          disabled={busy}
          onChange={(e) => {
            const v = e.currentTarget.value;
            void save.run({ presence: { offline_after_scans: v === '' ? null : Number(v) } });
          }}
        >
          <option value="">No: as set in Settings</option>
          {choices.map((n) => (
            <option key={n} value={String(n)}>
              Yes: offline after {n} missed scans
            </option>
          ))}
        </select>
      </Field>
      <ErrorMessage error={save.error ?? acknowledge.error} />
    </section>
  );
}

function BackLink() {
  return (
    <p class="back-link small">
      <a href="/devices">← Devices</a>
    </p>
  );
}

/** Where a hostname or MAC came from, when a name source (not the scan) gave it: "name from Pi-hole". */
function FactSource({ source, fact }: { source: DeviceDetail['hostname_source']; fact: string }) {
  if (!source || source === 'scan') return null;
  return (
    <div class="small muted">
      {fact} from {NAME_SOURCE_LABELS[source]}
    </div>
  );
}

/** Sources of evidence in words. */
const SOURCE_WORDS: Record<string, string> = {
  user: 'set by a person',
  mdns: 'mDNS',
  ssdp: 'UPnP',
  snmp: 'SNMP',
  netbios: 'NetBIOS',
  http_title: 'web page title',
  http_server: 'web server header',
  tls: 'TLS certificate',
  ssh: 'SSH',
  nmap_os: 'nmap OS detection',
  oui: 'MAC vendor',
  ports: 'open ports',
  hostname: 'host name',
};

/** What the device is and why Netwarden thinks so (GET /api/devices/{id}/identity). */
function IdentityCard({ device: d }: { device: DeviceDetail }) {
  const identity = useResource(
    (signal) => answer(api.GET('/api/devices/{device_id}/identity', { params: { path: { device_id: d.id } }, signal })),
    [d.id, d.last_seen, d.device_type, d.label],
  );
  const none = <span class="muted">Unknown</span>;
  const evidence = identity.data?.evidence ?? [];
  return (
    <section class="card identity-card">
      <h2>Identity</h2>
      <dl class="facts">
        <dt>Type</dt>
        <dd>
          <TypeIcon type={d.device_type} confidence={d.type_confidence} /> {typeLabel(d.device_type)}
          {d.type_confidence > 0 && d.type_confidence < 100 && <span class="muted small"> ({d.type_confidence}% sure)</span>}
        </dd>
        <dt>Name</dt>
        <dd>{d.name ?? none}</dd>
        <dt>Vendor and model</dt>
        <dd>{d.vendor || d.model ? [d.vendor, d.model].filter(Boolean).join(' ') : none}</dd>
        <dt>Operating system</dt>
        <dd>{d.os_name ? [d.os_name, d.os_version].filter(Boolean).join(' ') : none}</dd>
      </dl>
      <ErrorMessage error={identity.error} onRetry={identity.reload} />
      {evidence.length > 0 && (
        <>
          <h3>Evidence</h3>
          <ul class="evidence-list">
            {evidence.map((e, i) => (
              <li key={i}>
                <strong>{e.field.replace(/_/g, ' ')}</strong>: {e.value}{' '}
                <span class="muted small">
                  ({SOURCE_WORDS[e.source] ?? e.source}, {e.confidence}%)
                </span>
                <div class="small muted">{e.detail}</div>
              </li>
            ))}
          </ul>
        </>
      )}
      {identity.data && evidence.length === 0 && <p class="muted">No recognition evidence yet: a normal or intensive scan probes the device.</p>}
      {identity.data && identity.data.keys.length > 0 && (
        <>
          <h3>Identity keys</h3>
          <ul class="evidence-list mono small">
            {identity.data.keys.map((k) => (
              <li key={`${k.kind}:${k.value}`}>
                {k.kind.replace(/_/g, ' ')}: {k.value}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function Facts({ device: d }: { device: DeviceDetail }) {
  const none = <span class="muted">Unknown</span>;
  return (
    <section class="card facts-card">
      <h2>Details</h2>
      <dl class="facts">
        <dt>IP address</dt>
        <dd class="mono">{d.ip_address}</dd>
        <dt>MAC address</dt>
        <dd>
          {d.mac_address ? <span class="mono">{d.mac_address}</span> : none}
          <FactSource source={d.mac_source} fact="MAC" />
          {d.mac_randomized && <div class="small muted">Randomised by the device (a privacy feature), so it may change.</div>}
        </dd>
        <dt>Hostname</dt>
        <dd>
          {d.hostname ?? none}
          <FactSource source={d.hostname_source} fact="name" />
        </dd>
        <dt>Label</dt>
        <dd>{d.label ?? <span class="muted">None</span>}</dd>
        <dt>Vendor</dt>
        <dd>{d.vendor ?? none}</dd>
        <dt>Operating system</dt>
        <dd>{d.os_name ?? none}</dd>
        <dt>Device type</dt>
        <dd>{d.device_type ?? none}</dd>
        <dt>Zone</dt>
        <dd>{d.zone ?? <span class="muted">No zone</span>}</dd>
        <dt>Trusted</dt>
        <dd>{d.is_trusted ? 'Yes' : 'No'}</dd>
        <dt>Status</dt>
        <dd>
          <span class={`status-dot${d.online ? ' online' : ''}`} aria-hidden="true" />
          {d.online ? 'Online' : 'Offline'}{' '}
          {d.missed_scans > 0 ? (
            <span class={`small presence-missing${d.online ? '' : ' offline'}`}>
              ({missingText(d.missed_scans)}
              {d.online ? '; it goes offline after more missed scans, as set in Settings' : ''})
            </span>
          ) : (
            <span class="muted small">(seen by the latest scan)</span>
          )}
        </dd>
        <dt>First seen</dt>
        <dd>
          <Time iso={d.first_seen} relative={false} />
        </dd>
        <dt>Last seen</dt>
        <dd>
          <Time iso={d.last_seen} />
        </dd>
        <dt>Notes</dt>
        <dd class="notes">{d.notes || <span class="muted">None</span>}</dd>
      </dl>
    </section>
  );
}

function RiskSummary({ device: d, coverage }: { device: DeviceDetail; coverage: Coverage | null }) {
  const risk = d.risk_details;
  return (
    <section class="card risk-card">
      <h2>Risk</h2>
      <p>
        <RiskBadge level={risk.level} score={risk.score} coverage={coverage} /> <span class="muted small">score {risk.score} of 100</span>
      </p>
      {risk.summary && <p>{risk.summary}</p>}
      {risk.top_recommendation ? (
        <div>
          <h3>What to do first</h3>
          <p class="recommendation">
            <RichText text={risk.top_recommendation} />
          </p>
        </div>
      ) : (
        <p class="muted">
          {risk.level !== 'none'
            ? 'No individual finding is recorded for this score.'
            : coverage && !coverage.scanned
              ? 'No scan has examined the ports of this device yet: quick scans find devices but check no ports. Run a normal scan to assess it.'
              : 'Nothing to fix in the ports examined (below); other ports were not examined.'}
        </p>
      )}
      <ScoreExplained findings={risk.findings} score={risk.score} />
      <Examined coverage={d.coverage} />
      {risk.findings.length > 0 && (
        <p class="small">
          <a href="#findings">{plural(risk.findings.length, 'finding')}</a>
          {d.cves.length > 0 && (
            <>
              {' · '}
              <a href="#cves">{plural(d.cves.length, 'known vulnerability', 'known vulnerabilities')}</a>
            </>
          )}
        </p>
      )}
    </section>
  );
}

/** Findings shown by name in the score's explanation; the rest are summed up. */
const SCORE_PARTS_SHOWN = 5;

/**
 * How the score came about (core/risk.ts scoreFindings): the worst open finding sets the level and
 * its points, each further one adds a few, up to the top of the level's band; accepted findings add
 * nothing. Lists what each finding added.
 */
function ScoreExplained({ findings, score }: { findings: Finding[]; score: number }) {
  const counted = findings.filter((f) => f.score > 0);
  if (findings.length === 0) return null;
  const rest = counted.slice(SCORE_PARTS_SHOWN);
  const restPoints = rest.reduce((sum, f) => sum + f.score, 0);
  const accepted = findings.filter((f) => f.acceptance).length;
  const capped = findings.length - counted.length - accepted;
  return (
    <details class="score-explained small">
      <summary>How the score of {score} comes about</summary>
      <p>
        The worst open finding sets the level and most of the score; each further finding adds a few points, up to the top of that level's range, so
        many small findings never outweigh one critical one.
      </p>
      <ul class="compact">
        {counted.slice(0, SCORE_PARTS_SHOWN).map((f) => (
          <li key={f.finding_key}>
            +{f.score} {f.title} <span class="muted">({f.severity})</span>
          </li>
        ))}
        {rest.length > 0 && (
          <li>
            +{restPoints} {plural(rest.length, 'more finding')}
          </li>
        )}
      </ul>
      {capped > 0 && <p class="muted">{plural(capped, 'finding')} added nothing: the level's range was already full.</p>}
      {accepted > 0 && <p class="muted">{plural(accepted, 'accepted finding')} not counted.</p>}
    </details>
  );
}

/** Label, zone, trust and notes: the fields that belong to the user and survive every scan. */
function EditForm({ device, onCancel, onSaved }: { device: DeviceDetail; onCancel: () => void; onSaved: (device: DeviceDetail) => void }) {
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  const [label, setLabel] = useState(device.label ?? '');
  const [zone, setZone] = useState(device.zone ?? '');
  const [trusted, setTrusted] = useState(device.is_trusted);
  const [notes, setNotes] = useState(device.notes ?? '');
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const zoneOptions = [...(zones.data ?? [])];
  if (device.zone && !zoneOptions.includes(device.zone)) zoneOptions.push(device.zone);

  const save = useAction(async () => {
    const body = { label: label.trim() || null, zone: zone || null, is_trusted: trusted, notes: notes.trim() ? notes : null };
    const updated = await answer(api.PUT('/api/devices/{device_id}', { params: { path: { device_id: device.id } }, body }));
    onSaved(updated);
  });
  const submit = submitRunning(save);

  return (
    <section class="card edit-card">
      <h2>Edit device</h2>
      <form onSubmit={submit} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
        <ErrorMessage error={save.error} />
        <Field label="Label" hint="A name of your own; shown instead of the hostname.">
          <input ref={first} value={label} maxLength={DEVICE_LABEL_MAX_LENGTH} onInput={(e) => setLabel(e.currentTarget.value)} />
        </Field>
        <Field label="Zone">
          <select value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
            <option value="">No zone</option>
            {zoneOptions.map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </Field>
        <ErrorMessage error={zones.error} onRetry={zones.reload} />
        <label class="checkbox">
          <input type="checkbox" checked={trusted} onChange={(e) => setTrusted(e.currentTarget.checked)} />
          Trusted
        </label>
        <Field label="Notes">
          <textarea value={notes} maxLength={DEVICE_NOTES_MAX_LENGTH} rows={4} onInput={(e) => setNotes(e.currentTarget.value)} />
        </Field>
        <SaveCancelButtons busy={save.busy} label="Save" onCancel={onCancel} />
      </form>
    </section>
  );
}

type ScanRun = { id: number; scan: Scan | null };

/**
 * A scan of this device's address: starts it, then follows it (scan_finished events, or asking
 * every two seconds while the event stream is down) so the page can refresh when it ends.
 */
function useDeviceScan(ip: string, onFinished: () => void) {
  const [run, setRun] = useState<ScanRun | null>(null);
  const runRef = useRef(run);
  runRef.current = run;
  const running = run !== null && (run.scan === null || isActive(run.scan));
  const startScan = useAction(async () => {
    setRun(null);
    const started = await answer(api.POST('/api/scan/device/{ip_address}', { params: { path: { ip_address: ip } } }));
    // Its events may have come before this answer (a short scan): keep what they said.
    setRun((r) => (r?.id === started.scan_id ? r : { id: started.scan_id, scan: null }));
  });
  // Events of scans started before the answer above arrived: the last one of each, by id.
  const early = useRef(new Map<number, Scan>());

  const follow = (scan: Scan) => {
    const current = runRef.current;
    if (!current) {
      if (startScan.busy) early.current.set(scan.scan_id, scan);
      return;
    }
    if (current.id !== scan.scan_id) return;
    setRun({ id: scan.scan_id, scan });
    if (!isActive(scan)) onFinished();
  };
  const { live } = useEvents(['scan_started', 'scan_finished'], (event) => {
    if (event.name === 'scan_started' || event.name === 'scan_finished') follow(event.data);
  });
  useEffect(() => {
    const seen = run && run.scan === null ? early.current.get(run.id) : undefined;
    early.current.clear();
    if (seen) follow(seen);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs when a new run is recorded; `follow` reads refs
  }, [run?.id]);

  useInterval(
    () => {
      if (!run) return;
      answer(api.GET('/api/scans/{scan_id}', { params: { path: { scan_id: run.id } } })).then(follow, (err: unknown) => {
        startScan.setError(err);
        setRun(null);
      });
    },
    2000,
    running && !live,
  );

  return { run, busy: startScan.busy, running, error: startScan.error, start: () => void startScan.run() };
}

function ScanMessages({ run, error }: { run: ScanRun | null; error: unknown }) {
  return (
    <>
      <ErrorMessage error={error} />
      {error instanceof ApiError && error.status === 409 && (
        <p class="small">
          <a href="/scans">See the running scan</a>
        </p>
      )}
      {run && <ScanNotice run={run} />}
    </>
  );
}

function ScanNotice({ run }: { run: ScanRun }) {
  const status = run.scan?.status ?? 'queued';
  if (status === 'completed') {
    return <Notice kind="success">Scan #{run.id} finished; the details below are up to date.</Notice>;
  }
  if (status === 'cancelled') {
    return (
      <Notice>
        Scan #{run.id} was cancelled. <a href="/scans">Scans</a>
      </Notice>
    );
  }
  if (status === 'failed') {
    return (
      <Notice kind="warning">
        Scan #{run.id} failed{run.scan?.error ? `: ${run.scan.error}` : '.'} <a href="/scans">Scans</a>
      </Notice>
    );
  }
  return (
    <Notice>
      Scan #{run.id} of this device {status === 'queued' ? 'is queued' : 'started'}. <a href="/scans">Follow it on the Scans page</a>; this page
      refreshes when it ends.
    </Notice>
  );
}

/** Which scan last examined which ports, and when (CONTRACT §14): what the risk above covers. */
function Examined({ coverage }: { coverage: DeviceDetail['coverage'] }) {
  if (coverage.length === 0) return null;
  return (
    <div class="small">
      <h3>Examined</h3>
      <ul class="examined">
        {coverage.map((c) => (
          <li key={c.scan_id}>
            {describePorts(c.ports_examined)}: scan #{c.scan_id}, <Time iso={c.examined_at} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The open ports. On a phone (devices.css) the table keeps two columns, port and service, with the
 * product and version under the service, so it fits its card without scrolling sideways.
 */
function PortsCard({ ports }: { ports: Port[] }) {
  return (
    <section class="card ports-card">
      <h2>Ports</h2>
      {ports.length === 0 ? (
        <EmptyState title="No open ports found">
          A quick scan only finds devices and checks no ports; a normal or intensive scan lists the open ports and their services here.
        </EmptyState>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th class="num">Port</th>
                <th class="hide-narrow">State</th>
                <th>Service</th>
                <th class="port-product">Product and version</th>
                <th class="hide-narrow">Extra info</th>
              </tr>
            </thead>
            <tbody>
              {ports.map((p) => {
                const product = [p.product, p.version].filter(Boolean).join(' ');
                return (
                  <tr key={`${p.protocol}/${p.port}`} class={p.stale ? 'stale-port' : undefined}>
                    <td class="num mono nowrap">
                      {p.port}/{p.protocol}
                      {p.stale && <StaleMarker count={1} text="Not examined by the latest scan of this device: its last known state" />}
                      {p.stale && p.last_verified_at && (
                        <div class="small muted">
                          as of <Time iso={p.last_verified_at} />
                          {p.verified_by_scan_id !== null && ` (scan #${p.verified_by_scan_id})`}
                        </div>
                      )}
                    </td>
                    <td class="hide-narrow">{p.state}</td>
                    <td class="wrap-anywhere">
                      {p.service ?? <span class="muted">—</span>}
                      {product ? <div class="port-product-narrow">{product}</div> : null}
                      {p.description ? <div class="small muted port-description">{p.description}</div> : null}
                    </td>
                    <td class="port-product wrap-anywhere">{product || <span class="muted">—</span>}</td>
                    <td class="hide-narrow wrap-anywhere small">{p.extra_info ?? ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A CVE's finding or record, with the product it was found in: what the device page groups by. */
interface ProductGroup<T> {
  key: string;
  /** "OpenSSH 7.4 on port 22/tcp". */
  label: string;
  /** Known exploited first, then as the API ordered them (worst first). */
  items: T[];
  exploited: number;
  /** Items shown before "N more": the known exploited ones, and the worst one when it is not among them. */
  shown: number;
  /** The version that fixes every CVE of the group, when the CVE data says so for each. */
  fixedIn: string | null;
  fixKnown: number;
}

const compareVersions = new Intl.Collator('en', { numeric: true }).compare;

/** Groups CVE items by the port (and so the software) they were found on; known exploited first inside each. */
function groupByProduct<T>(items: T[], cveOf: (item: T) => Cve | undefined, portOf: (item: T) => string | null): ProductGroup<T>[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = portOf(item) ?? 'host';
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  const out = [...groups.entries()].map(([key, list]) => {
    const cves = list.map(cveOf);
    const named = cves.find((c) => c?.matched_product);
    const software = named ? [named.matched_product, named.matched_version].filter(Boolean).join(' ') : 'The software';
    const exploited = (item: T) => (cveOf(item)?.kev ? 1 : 0);
    const sorted = list
      .map((item, i) => ({ item, i }))
      .sort((a, b) => exploited(b.item) - exploited(a.item) || a.i - b.i)
      .map((x) => x.item);
    const fixes = cves.map((c) => c?.fixed_in ?? null);
    const known = fixes.filter((v): v is string => v !== null);
    return {
      key,
      label: key === 'host' ? `${software} on this device` : `${software} on port ${key}`,
      items: sorted,
      exploited: list.filter(exploited).length,
      shown: list.filter(exploited).length + (exploited(list[0]) ? 0 : 1),
      fixedIn: known.length === fixes.length && known.length > 0 ? known.reduce((a, b) => (compareVersions(b, a) > 0 ? b : a)) : null,
      fixKnown: known.length,
    };
  });
  // Groups with exploited CVEs first, then the larger ones.
  return out.sort((a, b) => b.exploited - a.exploited || b.items.length - a.items.length);
}

/** What upgrading fixes, in words: "Upgrading to 9.8 fixes all 11" or what is known. */
function fixText(g: ProductGroup<unknown>): string | null {
  const n = g.items.length;
  if (g.fixedIn) return n === 1 ? `Fixed in ${g.fixedIn}.` : `Upgrading to ${g.fixedIn} or later fixes all ${n}.`;
  if (g.fixKnown > 0) return `The CVE data names a fixed version for ${g.fixKnown} of ${n}; check the vendor's advisories for the rest.`;
  return null;
}

/** Text with `backticks` shown as code: recommendations carry commands and settings that way. */
export function RichText({ text }: { text: string }) {
  const parts = text.split(/(`[^`\n]+`)/);
  return (
    <>{parts.map((part, i) => (part.length > 2 && part.startsWith('`') && part.endsWith('`') ? <code key={i}>{part.slice(1, -1)}</code> : part))}</>
  );
}

function FindingsCard({ deviceId, findings, cves, onChanged }: { deviceId: number; findings: Finding[]; cves: Cve[]; onChanged: () => void }) {
  const [accepting, setAccepting] = useState<Finding | null>(null);
  const byId = new Map(cves.map((c) => [`${c.id} ${c.port ?? '-'}`, c]));
  const cveOf = (f: Finding) => (f.cve_ids[0] ? byId.get(`${f.cve_ids[0]} ${f.port ?? '-'}`) : undefined);
  const others = findings.filter((f) => f.kind !== 'cve');
  const groups = groupByProduct(
    findings.filter((f) => f.kind === 'cve'),
    cveOf,
    (f) => (f.port === null ? null : `${f.port}/${f.protocol ?? 'tcp'}`),
  );
  const item = (f: Finding, compact: boolean) => (
    <FindingItem key={f.finding_key} finding={f} cve={cveOf(f)} compact={compact} cves={cves} onAccept={() => setAccepting(f)} />
  );
  return (
    <section class="card findings-card" id="findings">
      <h2>Risk findings</h2>
      {findings.length === 0 ? (
        <EmptyState title="No risk findings">
          The latest scan found nothing risky on this device: no risky open service and no known vulnerability.
        </EmptyState>
      ) : (
        <>
          {others.length > 0 && <ul class="detail-list">{others.map((f) => item(f, false))}</ul>}
          {groups.map((g) => {
            const shown = g.shown;
            return (
              <div key={g.key} class="product-group">
                <h3>
                  {g.label}: {plural(g.items.length, 'CVE')}
                  {g.exploited > 0 && <span class="badge kev">{g.exploited} known exploited</span>}
                </h3>
                {fixText(g) && <p class="small">{fixText(g)}</p>}
                <ul class="detail-list">{g.items.slice(0, shown).map((f) => item(f, false))}</ul>
                {g.items.length > shown && (
                  <details class="product-more">
                    <summary>
                      {plural(g.items.length - shown, `more CVE`)} in {g.label.split(' on ')[0]}
                    </summary>
                    <ul class="detail-list compact-list">{g.items.slice(shown).map((f) => item(f, true))}</ul>
                  </details>
                )}
              </div>
            );
          })}
        </>
      )}
      <AcceptDialog
        deviceId={deviceId}
        finding={accepting}
        onClose={() => setAccepting(null)}
        onAccepted={() => {
          setAccepting(null);
          onChanged();
        }}
      />
    </section>
  );
}

/** One finding: in full (description, recommendation), or compact (one line) inside a collapsed group. */
function FindingItem({
  finding: f,
  cve,
  compact,
  cves,
  onAccept,
}: {
  finding: Finding;
  cve: Cve | undefined;
  compact: boolean;
  cves: Cve[];
  onAccept: () => void;
}) {
  const known = new Set(cves.map((c) => c.id));
  const acceptButton = !f.acceptance && (
    <button type="button" class="small-button" onClick={onAccept} aria-label={`Accept ${f.title}`}>
      Accept…
    </button>
  );
  if (compact) {
    return (
      <li class={f.acceptance ? 'accepted-finding' : undefined}>
        <div class="detail-head">
          <SeverityBadge severity={severityOf(f.severity)} />
          {f.acceptance && <span class="badge accepted">Accepted</span>}
          <a class="mono" href={`#${cveAnchor(f.cve_ids[0] ?? '')}`}>
            {f.cve_ids[0] ?? f.title}
          </a>
          {cve?.cvss_score !== null && cve?.cvss_score !== undefined && <span class="small muted">CVSS {cve.cvss_score}</span>}
          {cve && cve.confidence !== 'confirmed' && <span class="small muted">likely</span>}
          {acceptButton}
        </div>
      </li>
    );
  }
  return (
    <li class={f.acceptance ? 'accepted-finding' : undefined}>
      <div class="detail-head">
        <SeverityBadge severity={severityOf(f.severity)} />
        {f.acceptance && <span class="badge accepted">Accepted</span>}
        <strong>{f.title}</strong>
        {f.port !== null && (
          <span class="muted small mono">
            {f.port}/{f.protocol ?? 'tcp'}
            {f.service ? ` ${f.service}` : ''}
          </span>
        )}
        {cve && cve.confidence !== 'confirmed' && (
          <span class="badge confidence" title="The version came only from the service's banner, or the patch level cannot be seen">
            Likely
          </span>
        )}
      </div>
      <p>{f.description}</p>
      <p class="recommendation">
        <span class="muted">Recommendation: </span>
        <RichText text={f.recommendation} />
      </p>
      {f.cve_ids.length > 0 && (
        <p class="small">
          <span class="muted">CVEs: </span>
          {f.cve_ids.map((id, j) => (
            <span key={id}>
              {j > 0 && ', '}
              {known.has(id) ? (
                <a href={`#${cveAnchor(id)}`}>{id}</a>
              ) : (
                <a href={nvdUrl(id)} target="_blank" rel="noreferrer noopener">
                  {id}
                </a>
              )}
            </span>
          ))}
        </p>
      )}
      {f.acceptance ? (
        <p class="small acceptance-note">
          Accepted by {f.acceptance.by} <Time iso={f.acceptance.created_at} />: “{f.acceptance.reason}”,{' '}
          {f.acceptance.expires_at ? `until ${formatDateTime(f.acceptance.expires_at)}` : 'no expiry'}. It does not count toward the risk level.{' '}
          <a href="/accepted">Accepted risk</a>
        </p>
      ) : (
        <div class="finding-actions">{acceptButton}</div>
      )}
    </li>
  );
}

/** The end of the chosen day in the browser's time zone, as the API takes `expires_at`. */
function endOfDay(date: string): string {
  return new Date(`${date}T23:59:59`).toISOString();
}

/** Tomorrow as a date input's value (YYYY-MM-DD, local): the earliest expiry the form offers. */
function tomorrow(): string {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** Accept a finding: why (required) and until when (optional); POST /api/acceptances. */
function AcceptDialog({
  deviceId,
  finding,
  onClose,
  onAccepted,
}: {
  deviceId: number;
  finding: Finding | null;
  onClose: () => void;
  onAccepted: () => void;
}) {
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  useEffect(() => {
    setReason('');
    setUntil('');
  }, [finding]);
  const accept = useAction(async () => {
    if (!finding) return;
    await api.POST('/api/acceptances', {
      body: { device_id: deviceId, finding_key: finding.finding_key, reason: reason.trim(), ...(until ? { expires_at: endOfDay(until) } : {}) },
    });
    onAccepted();
  });
  const submit = (e: Event) => {
    e.preventDefault();
    void accept.run();
  };
  return (
    <Dialog open={finding !== null} title="Accept risk" onClose={onClose}>
      <form class="accept-form" onSubmit={submit}>
        <p>
          <strong>{finding?.title}</strong>
          {finding?.port !== null && finding?.port !== undefined && (
            <span class="muted mono">
              {' '}
              {finding.port}/{finding.protocol ?? 'tcp'}
            </span>
          )}
        </p>
        <p class="small muted">An accepted finding stays listed but counts toward neither the device's risk level nor its score.</p>
        <Field label="Reason" hint="Why this risk is acceptable, for whoever reads it later.">
          <textarea required maxLength={ACCEPTANCE_REASON_MAX_LENGTH} value={reason} onInput={(e) => setReason(e.currentTarget.value)} autoFocus />
        </Field>
        <Field label="Expires on (optional)" hint="After this day the finding counts again. Leave empty for no expiry.">
          <input type="date" min={tomorrow()} value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
        </Field>
        <ErrorMessage error={accept.error} />
        <div class="button-row">
          <button type="submit" class="primary" disabled={accept.busy || reason.trim() === ''}>
            {accept.busy ? 'Accepting…' : 'Accept risk'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

const cveAnchor = (id: string) => `cve-${id}`;
const nvdUrl = (id: string) => `https://nvd.nist.gov/vuln/detail/${encodeURIComponent(id)}`;
/** Only web addresses become links: a reference from a data feed must never be a javascript: URL. */
const isWebUrl = (url: string) => /^https?:\/\//i.test(url);

function CvesCard({ cves }: { cves: Cve[] }) {
  const groups = groupByProduct(
    cves,
    (c) => c,
    (c) => (c.port === null ? null : String(c.port)),
  );
  return (
    <section class="card cves-card" id="cves">
      <h2>Known vulnerabilities (CVEs)</h2>
      {cves.length === 0 ? (
        <EmptyState title="No known vulnerabilities">
          No product and version seen on this device matches a CVE in Netwarden's dataset. Services whose version is unknown cannot be matched.
        </EmptyState>
      ) : (
        groups.map((g) => {
          const shown = g.shown;
          return (
            <div key={g.key} class="product-group">
              <h3>
                {g.label}: {plural(g.items.length, 'CVE')}
                {g.exploited > 0 && <span class="badge kev">{g.exploited} known exploited</span>}
              </h3>
              <ul class="detail-list">
                {g.items.slice(0, shown).map((c) => (
                  <CveItem key={c.id} cve={c} />
                ))}
              </ul>
              {g.items.length > shown && (
                <details class="product-more">
                  <summary>{plural(g.items.length - shown, 'more CVE')}</summary>
                  <ul class="detail-list">
                    {g.items.slice(shown).map((c) => (
                      <CveItem key={c.id} cve={c} />
                    ))}
                  </ul>
                </details>
              )}
            </div>
          );
        })
      )}
    </section>
  );
}

function CveItem({ cve: c }: { cve: Cve }) {
  const refs = c.references.filter(isWebUrl);
  const matched = [c.matched_product, c.matched_version].filter(Boolean).join(' ');
  return (
    <li id={cveAnchor(c.id)}>
      <div class="detail-head">
        <strong class="mono">{c.id}</strong>
        <SeverityBadge severity={severityOf(c.severity)} />
        <span class="small">CVSS {c.cvss_score ?? '—'}</span>
        {c.kev && <span class="badge kev">Known exploited</span>}
        <span class="small muted">{c.confidence === 'confirmed' ? 'Product and version match' : `Match: ${c.confidence}`}</span>
      </div>
      <p>{c.description}</p>
      {(matched || c.port !== null) && (
        <p class="small">
          <span class="muted">Matched: </span>
          {matched || 'a service'}
          {c.port !== null && ` on port ${c.port}`}
          {c.fixed_in && <span> · fixed in {c.fixed_in}</span>}
        </p>
      )}
      {c.remediation && (
        <p>
          <span class="muted">Remediation: </span>
          <RichText text={c.remediation} />
        </p>
      )}
      <p class="small links">
        <a href={nvdUrl(c.id)} target="_blank" rel="noreferrer noopener">
          {c.id} on NVD
        </a>
        {refs.slice(0, REFERENCES_SHOWN).map((url) => (
          <ExternalLink key={url} url={url} />
        ))}
      </p>
      {refs.length > REFERENCES_SHOWN && (
        <details class="small">
          <summary>{plural(refs.length - REFERENCES_SHOWN, 'more reference')}</summary>
          <ul class="compact">
            {refs.slice(REFERENCES_SHOWN).map((url) => (
              <li key={url}>
                <ExternalLink url={url} />
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

/** A reference link, shown by its host name; the full address is in the tooltip. */
function ExternalLink({ url }: { url: string }) {
  let host = url;
  try {
    host = new URL(url).host;
  } catch {
    // Not parseable: show it whole.
  }
  return (
    <a href={url} target="_blank" rel="noreferrer noopener" title={url} class="wrap-anywhere">
      {host}
    </a>
  );
}

function ChangeHistory({ deviceId, version }: { deviceId: number; version: number }) {
  const [limit, setLimit] = useState(CHANGES_PAGE);
  const changes = useResource(
    (signal) => page(api.GET('/api/changes', { params: { query: { device_id: deviceId, limit } }, signal })),
    [deviceId, limit, version],
  );
  const items = changes.data?.items ?? [];
  const total = changes.data?.total ?? 0;
  return (
    <section class="card changes-card">
      <h2>Change history</h2>
      <ErrorMessage error={changes.error} onRetry={changes.reload} />
      {changes.loading && !changes.data && <Loading />}
      {changes.data && items.length === 0 && (
        <EmptyState title="No changes recorded">Changes appear when a later scan finds this device's ports or services different.</EmptyState>
      )}
      {items.length > 0 && (
        <ul class="detail-list compact-list">
          {items.map((c) => (
            <li key={c.id}>
              <div class="detail-head">
                <SeverityBadge severity={severityOf(c.severity)} />
                <span class="wrap-anywhere">{c.description}</span>
              </div>
              <span class="small muted">
                <Time iso={c.detected_at} /> · scan #{c.scan_id}
              </span>
            </li>
          ))}
        </ul>
      )}
      {items.length < total && (
        <p>
          <button type="button" disabled={changes.loading} onClick={() => setLimit((n) => n + CHANGES_PAGE)}>
            {changes.loading ? 'Loading…' : `Show older changes (${(total - items.length).toLocaleString()} more)`}
          </button>
        </p>
      )}
    </section>
  );
}

function IpHistory({ history }: { history: DeviceDetail['ip_history'] }) {
  return (
    <section class="card ip-card">
      <h2>IP history</h2>
      {history.length === 0 ? (
        <EmptyState title="No address history">The addresses this device used appear here once it has been seen by a scan.</EmptyState>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>IP address</th>
                <th>First seen</th>
                <th>Last seen</th>
              </tr>
            </thead>
            <tbody>
              {history.map((h) => (
                <tr key={h.ip_address}>
                  <td class="mono">{h.ip_address}</td>
                  <td>
                    <Time iso={h.first_seen} />
                  </td>
                  <td>
                    <Time iso={h.last_seen} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
