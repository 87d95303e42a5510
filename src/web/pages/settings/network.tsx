import { useId, useState } from 'preact/hooks';
import { HOST_TIMEOUT_SECONDS, MAX_PARALLEL_SCANS, OFFLINE_AFTER_SCANS, PORTS, TOP_PORTS } from '../../../core/limits.js';
import { WholeNumberInput } from '../../components/form-parts';
import { ProfileSelect } from '../../components/profile-select';
import { SubnetField, useSubnetCheck } from '../../components/subnet-field';
import { ErrorMessage, Field, Notice } from '../../components/ui';
import { answer, api } from '../../api';
import { submitRunning, useAction, useResource } from '../../hooks';
import { fieldMessage, unlessField } from '../../plain';
import { parseList, sameList, withListEntry } from '../../lists';
import { SCAN_ENGINES, type Config, type ConfigPatch, type ScanEngine, type ScanProfile } from '../../types';
import { saveConfig, type ConfigSectionProps } from './config';

interface NetworkForm {
  subnet: string;
  exclude: string;
  allowedTargets: string;
  portRange: string;
  topPorts: string;
  engine: ScanEngine;
  profile: ScanProfile;
  resolveHostnames: boolean;
  hostTimeout: string;
  maxParallel: string;
  offlineAfter: string;
  /** null: this server has no server.public_url setting (it predates notifications). */
  publicUrl: string | null;
}

/** server.public_url, where the server has it. */
function publicUrlOf(config: Config): string | null {
  const server = config.server as Config['server'] & { public_url?: string };
  return typeof server.public_url === 'string' ? server.public_url : null;
}

function networkForm(config: Config): NetworkForm {
  return {
    subnet: config.network.subnet,
    // The server stores single addresses as /32 blocks; show them as typed.
    exclude: config.network.exclude.map((e) => e.replace(/\/32$/, '')).join('\n'),
    allowedTargets: config.scanning.allowed_targets.join('\n'),
    portRange: config.scanning.port_range,
    topPorts: String(config.scanning.top_ports),
    engine: config.scanning.engine,
    profile: config.scanning.default_profile,
    resolveHostnames: config.network.resolve_hostnames,
    hostTimeout: String(config.scanning.host_timeout_seconds),
    maxParallel: String(config.scanning.max_parallel_scans),
    offlineAfter: String(config.presence.offline_after_scans),
    publicUrl: publicUrlOf(config),
  };
}

/** The settings this form has a field for: a refusal about one of them shows under that field. */
const FIELD_PATHS = [
  'network.subnet',
  'network.exclude',
  'server.public_url',
  'scanning.allowed_targets',
  'scanning.port_range',
  'scanning.top_ports',
  'scanning.host_timeout_seconds',
  'scanning.max_parallel_scans',
  'presence.offline_after_scans',
];

/**
 * Subnet, excluded and allowed addresses, the public address (for links in notifications), ports,
 * engine, default profile, name lookups, host timeout, parallel scans, when devices count as offline.
 */
export function NetworkSettings({ config, onSaved }: ConfigSectionProps) {
  const [form, setForm] = useState(() => networkForm(config));
  const [done, setDone] = useState(false);
  const resolveId = useId();
  const subnetCheck = useSubnetCheck(form.subnet);
  // Settings an environment variable decides on this server: shown read-only, naming the variable.
  const locks = useResource((signal) => answer(api.GET('/api/config/locked', { signal })), []);
  const allowedLock = locks.data?.find((l) => l.path === 'scanning.allowed_targets')?.variable ?? null;

  const update = (patch: Partial<NetworkForm>) => {
    setForm((f) => ({ ...f, ...patch }));
    setDone(false);
  };

  const save = useAction(async () => {
    setDone(false);
    const exclude = parseList(form.exclude);
    // Sent only when edited: a server started with NETWARDEN_SCAN_ALLOW refuses any change to
    // the list (400, shown here), and must not block saving the rest of the form.
    const allowed = parseList(form.allowedTargets);
    const allowedTargets = allowedLock || sameList(allowed, config.scanning.allowed_targets) ? undefined : allowed;
    // Only to a server that has the setting (an older one refuses an unknown key).
    const serverPatch: (Partial<Config['server']> & { public_url?: string }) | null =
      form.publicUrl === null ? null : { public_url: form.publicUrl.trim() };
    const patch: ConfigPatch = {
      network: { subnet: form.subnet.trim(), exclude, resolve_hostnames: form.resolveHostnames },
      scanning: {
        port_range: form.portRange.trim(),
        top_ports: Number(form.topPorts),
        engine: form.engine,
        default_profile: form.profile,
        host_timeout_seconds: Number(form.hostTimeout),
        max_parallel_scans: Number(form.maxParallel),
        ...(allowedTargets && { allowed_targets: allowedTargets }),
      },
      presence: { offline_after_scans: Number(form.offlineAfter) },
      ...(serverPatch && { server: serverPatch }),
    };
    const next = await saveConfig(patch).catch((err: unknown) => {
      throw withListEntry(err, { 'network.exclude': exclude, 'scanning.allowed_targets': allowedTargets });
    });
    onSaved(next);
    setForm(networkForm(next));
    setDone(true);
  });
  const submit = submitRunning(save);
  /** The last save's refusal under the field it is about (`paths`: the settings the field edits). */
  const errorOf = (...paths: string[]) => fieldMessage(save.error, ...paths);

  return (
    <form onSubmit={submit}>
      <SubnetField
        value={form.subnet}
        check={subnetCheck}
        error={errorOf('network.subnet')}
        onChange={(subnet) => update({ subnet })}
        hint="The network to scan, in CIDR form such as 192.168.1.0/24. Detect reads this server's network interfaces."
      />
      <Field
        error={errorOf('network.exclude')}
        label="Excluded addresses"
        hint="Never scanned. One IPv4 address or CIDR block per line (commas work too), such as 192.168.1.1 or 10.0.0.0/28."
      >
        <textarea name="exclude" rows={3} value={form.exclude} onInput={(e) => update({ exclude: e.currentTarget.value })} />
      </Field>
      {form.publicUrl !== null && (
        <Field
          error={errorOf('server.public_url')}
          label="Public address of Netwarden"
          hint="Where people reach this web interface, such as https://netwarden.example.lan. Notifications link to devices under it; empty: messages carry no links."
        >
          <input
            name="public_url"
            type="url"
            inputMode="url"
            placeholder="https://netwarden.example.lan"
            value={form.publicUrl}
            onInput={(e) => update({ publicUrl: e.currentTarget.value })}
          />
        </Field>
      )}
      <Field
        label="Allowed scan targets"
        error={errorOf('scanning.allowed_targets')}
        hint={
          allowedLock ? (
            <span class="locked-setting" data-testid="locked-allowed-targets">
              Read-only: set by the <code>{allowedLock}</code> environment variable on this server. Change it there and restart the service.
            </span>
          ) : (
            'Scans may only reach addresses inside these IPv4 CIDR blocks, one per line (commas work too); a scan of anything else is refused.'
          )
        }
      >
        <textarea
          name="allowed_targets"
          rows={3}
          readOnly={allowedLock !== null}
          value={form.allowedTargets}
          onInput={(e) => update({ allowedTargets: e.currentTarget.value })}
        />
      </Field>
      <div class="settings-grid">
        <Field
          error={errorOf('scanning.port_range')}
          label="Port range"
          hint={`Ports the normal profile checks (${PORTS.min}–${PORTS.max}): 1-1000, or a list such as 22,80,443,8000-8100.`}
        >
          <input name="port_range" required value={form.portRange} onInput={(e) => update({ portRange: e.currentTarget.value })} />
        </Field>
        <Field
          error={errorOf('scanning.top_ports')}
          label="Most frequent ports"
          hint={`The normal profile also checks this many of the most frequently open TCP ports (such as 3389, 5900, 8080) and common home-server ports (Redis, MQTT, Home Assistant, Plex) beside the port range (${TOP_PORTS.min}–${TOP_PORTS.max}; 0: the port range alone). Intensive scans check every port.`}
        >
          <WholeNumberInput name="top_ports" range={TOP_PORTS} value={form.topPorts} onInput={(topPorts) => update({ topPorts })} />
        </Field>
        <Field
          error={errorOf('scanning.host_timeout_seconds')}
          label="Host timeout (seconds)"
          hint={`How long one device may take before the scan moves on (${HOST_TIMEOUT_SECONDS.min}–${HOST_TIMEOUT_SECONDS.max}).`}
        >
          <WholeNumberInput
            name="host_timeout_seconds"
            range={HOST_TIMEOUT_SECONDS}
            value={form.hostTimeout}
            onInput={(hostTimeout) => update({ hostTimeout })}
          />
        </Field>
        <Field
          error={errorOf('scanning.max_parallel_scans')}
          label="Parallel scans"
          hint={`How many scans may run at once (${MAX_PARALLEL_SCANS.min}–${MAX_PARALLEL_SCANS.max}), on this server's workers and on agents together. Scans whose targets overlap never run at once; a scan started while every place is taken is refused, and scheduled runs wait in the queue.`}
        >
          <WholeNumberInput
            name="max_parallel_scans"
            range={MAX_PARALLEL_SCANS}
            value={form.maxParallel}
            onInput={(maxParallel) => update({ maxParallel })}
          />
        </Field>
        <Field
          error={errorOf('presence.offline_after_scans')}
          label="Offline after missed scans"
          hint={`A device counts as gone (offline, and reported as removed) only after this many network scans in a row missed it (${OFFLINE_AFTER_SCANS.min}–${OFFLINE_AFTER_SCANS.max}). Phones that sleep need 2 or 3.`}
        >
          <WholeNumberInput
            name="offline_after_scans"
            range={OFFLINE_AFTER_SCANS}
            value={form.offlineAfter}
            onInput={(offlineAfter) => update({ offlineAfter })}
          />
        </Field>
        <Field label="Engine" hint="auto uses nmap when it is installed and the built-in scanner otherwise; native never uses nmap.">
          <select name="engine" value={form.engine} onChange={(e) => update({ engine: e.currentTarget.value as ScanEngine })}>
            {SCAN_ENGINES.map((engine) => (
              <option key={engine} value={engine}>
                {engine}
              </option>
            ))}
          </select>
        </Field>
        <ProfileSelect
          label="Default profile"
          name="default_profile"
          hint="The profile preselected on the Scans page."
          value={form.profile}
          onChange={(profile) => update({ profile })}
        />
      </div>
      <div class="field">
        <label class="checkbox">
          <input
            type="checkbox"
            name="resolve_hostnames"
            checked={form.resolveHostnames}
            onChange={(e) => update({ resolveHostnames: e.currentTarget.checked })}
            aria-describedby={resolveId}
          />
          Resolve hostnames
        </label>
        <span id={resolveId} class="hint">
          Look up each device's name in DNS during scans. Slower on networks without local DNS.
        </span>
      </div>
      <ErrorMessage error={unlessField(save.error, ...FIELD_PATHS)} />
      {done && <Notice kind="success">Settings saved.</Notice>}
      <div class="button-row">
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save settings'}
        </button>
      </div>
    </form>
  );
}
