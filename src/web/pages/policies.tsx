// Zone policies (CONTRACT §17, §18): per zone, the ports and services that must not be open, or
// an allow-list of the only ports that may be, and how severe a breach is. A breach becomes a
// finding `policy:<zone>:<port>` on the device. The suggested policies for IoT and Guest are
// offered here ("Use suggested"), never applied unasked. One Save writes every zone (PUT replaces
// the whole object); each mistake shows under its field, in the browser before the server's.
import { cloneElement, type VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { FINDING_SEVERITIES } from '../../core/severity.js';
import { ApiError, answer, api } from '../api';
import { HumanizedOptions } from '../components/form-parts';
import { EmptyState, ErrorMessage, Loading, Notice, PageHeader } from '../components/ui';
import { useAction, useResource, useTitle } from '../hooks';
import type { PriorityFinding } from '../types';
import './risk.css';

type Severity = PriorityFinding['severity'];
type Policies = Record<
  string,
  { forbidden_ports: (number | string)[]; forbidden_services: string[]; allowed_ports: (number | string)[] | null; severity: Severity }
>;

/** One zone's policy as the form holds it: lists as the text typed. */
interface Draft {
  enabled: boolean;
  forbiddenPorts: string;
  forbiddenServices: string;
  allowList: boolean;
  allowedPorts: string;
  severity: Severity;
}

type FieldName = 'forbidden_ports' | 'forbidden_services' | 'allowed_ports' | 'severity';
type Errors = Record<string, Partial<Record<FieldName | 'zone', string>>>;

const EMPTY: Draft = { enabled: false, forbiddenPorts: '', forbiddenServices: '', allowList: false, allowedPorts: '', severity: 'high' };

function draftOf(policy: Policies[string] | undefined): Draft {
  if (!policy) return { ...EMPTY };
  return {
    enabled: true,
    forbiddenPorts: policy.forbidden_ports.join(', '),
    forbiddenServices: policy.forbidden_services.join(', '),
    allowList: policy.allowed_ports !== null,
    allowedPorts: (policy.allowed_ports ?? []).join(', '),
    severity: policy.severity,
  };
}

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** "23, 445 161/udp" → [23, 445, "161/udp"], or the first entry that is not a port, in words. */
export function parsePorts(text: string): { ok: true; value: (number | string)[] } | { ok: false; error: string } {
  const out: (number | string)[] = [];
  for (const word of words(text)) {
    const m = /^(\d{1,5})(?:\/(tcp|udp))?$/i.exec(word);
    const port = m ? Number(m[1]) : NaN;
    if (!m || port < 1 || port > 65535)
      return { ok: false, error: `“${word}” is not a port: write a number from 1 to 65535, such as 23, or 161/udp for UDP.` };
    const value = m[2]?.toLowerCase() === 'udp' ? `${port}/udp` : port;
    if (!out.includes(value)) out.push(value);
  }
  return { ok: true, value: out };
}

/** The drafts as PUT /api/policies takes them, or the errors under each field. */
function toPolicies(drafts: Record<string, Draft>): { policies: Policies; errors: Errors } {
  const policies: Policies = {};
  const errors: Errors = {};
  for (const [zone, d] of Object.entries(drafts)) {
    if (!d.enabled) continue;
    const e: Errors[string] = {};
    const forbidden = parsePorts(d.forbiddenPorts);
    if (!forbidden.ok) e.forbidden_ports = forbidden.error;
    const allowed = d.allowList ? parsePorts(d.allowedPorts) : null;
    if (allowed && !allowed.ok) e.allowed_ports = allowed.error;
    const services = words(d.forbiddenServices).map((s) => s.toLowerCase());
    const long = services.find((s) => s.length > 64);
    if (long) e.forbidden_services = `“${long.slice(0, 20)}…” is too long for a service name (at most 64 characters).`;
    if (forbidden.ok && (!allowed || allowed.ok) && services.length === 0 && forbidden.value.length === 0 && !d.allowList) {
      e.forbidden_ports = 'Name at least one port or service to forbid, or turn on the allow-list.';
    }
    if (Object.keys(e).length > 0) {
      errors[zone] = e;
      continue;
    }
    policies[zone] = {
      forbidden_ports: forbidden.ok ? forbidden.value : [],
      forbidden_services: [...new Set(services)],
      allowed_ports: allowed && allowed.ok ? allowed.value : null,
      severity: d.severity,
    };
  }
  return { policies, errors };
}

/** The server's `IoT.forbidden_ports[2]: …` as an error under that zone's field. */
function serverErrors(error: unknown, zones: string[]): Errors | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const m = /^([^.:]+)(?:\.(forbidden_ports|forbidden_services|allowed_ports|severity))?(?:\[\d+\])?: (.*)$/.exec(error.detail);
  if (!m || !zones.includes(m[1])) return null;
  return { [m[1]]: { [(m[2] as FieldName | undefined) ?? 'zone']: m[3] } };
}

export function PoliciesPage() {
  useTitle('Zone policies');
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  const current = useResource((signal) => answer(api.GET('/api/policies', { signal })), []);
  const suggested = useResource((signal) => answer(api.GET('/api/policies/suggested', { signal })), []);
  const [drafts, setDrafts] = useState<Record<string, Draft> | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [saved, setSaved] = useState(false);

  const zoneNames = zones.data ?? [];
  useEffect(() => {
    if (!zones.data || !current.data) return;
    const policies = current.data;
    setDrafts(Object.fromEntries(zones.data.map((z) => [z, draftOf(policies[z])])));
  }, [zones.data, current.data]);

  const save = useAction(async () => {
    if (!drafts) return;
    setSaved(false);
    const { policies, errors: found } = toPolicies(drafts);
    setErrors(found);
    if (Object.keys(found).length > 0) throw new Error('Some fields need a correction: see below the fields marked.');
    try {
      await answer(api.PUT('/api/policies', { body: policies }));
    } catch (error) {
      const under = serverErrors(error, zoneNames);
      if (under) {
        setErrors(under);
        throw new Error('A field needs a correction: see below it.');
      }
      throw error;
    }
    setSaved(true);
    current.reload();
  });

  const update = (zone: string, change: Partial<Draft>) => {
    setSaved(false);
    setDrafts((all) => (all ? { ...all, [zone]: { ...all[zone], ...change } } : all));
  };

  const loadError = zones.error ?? current.error;
  return (
    <div class="policies">
      <PageHeader title="Zone policies" />
      <p class="muted">
        What must not be open in each zone. A device whose open port breaks its zone's policy gets a finding with the severity you choose here; it
        counts toward the device's risk like any other and shows on <a href="/fix-first">Fix first</a>. Devices are assessed again within seconds of a
        save, no scan needed.
      </p>
      <ErrorMessage error={loadError} onRetry={() => (zones.error ? zones.reload() : current.reload())} />
      {!drafts && !loadError && <Loading label="Loading policies…" />}
      {drafts && zoneNames.length === 0 && (
        <EmptyState title="No zones">
          Add zones in <a href="/settings">Settings</a> first; policies belong to zones.
        </EmptyState>
      )}
      {drafts && zoneNames.length > 0 && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          {zoneNames.map((zone) => (
            <ZoneCard
              key={zone}
              zone={zone}
              draft={drafts[zone] ?? EMPTY}
              errors={errors[zone] ?? {}}
              suggested={suggested.data?.[zone]}
              onChange={(change) => update(zone, change)}
            />
          ))}
          <ErrorMessage error={save.error} />
          {saved && <Notice kind="success">Policies saved. Devices are being assessed again.</Notice>}
          <div class="button-row">
            <button type="submit" class="primary" disabled={save.busy}>
              {save.busy ? 'Saving…' : 'Save policies'}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

function ZoneCard({
  zone,
  draft: d,
  errors,
  suggested,
  onChange,
}: {
  zone: string;
  draft: Draft;
  errors: Errors[string];
  suggested: Policies[string] | undefined;
  onChange: (change: Partial<Draft>) => void;
}) {
  const id = `zone-${zone.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <section class="card policy-card" aria-label={`${zone} policy`}>
      <div class="card-header">
        <h2>{zone}</h2>
        {suggested && (
          <button type="button" onClick={() => onChange({ ...draftOf(suggested) })}>
            Use suggested
          </button>
        )}
      </div>
      <label class="checkbox">
        <input type="checkbox" checked={d.enabled} onChange={(e) => onChange({ enabled: e.currentTarget.checked })} />
        Enforce a policy in {zone}
      </label>
      {errors.zone && <p class="field-error">{errors.zone}</p>}
      {d.enabled && (
        <div class="policy-fields">
          <PolicyField id={`${id}-ports`} label="Forbidden ports" hint="Such as 23, 445, 161/udp (TCP unless /udp)." error={errors.forbidden_ports}>
            <input value={d.forbiddenPorts} onInput={(e) => onChange({ forbiddenPorts: e.currentTarget.value })} spellcheck={false} />
          </PolicyField>
          <PolicyField
            id={`${id}-services`}
            label="Forbidden services"
            hint="nmap service names, such as telnet, vnc, microsoft-ds."
            error={errors.forbidden_services}
          >
            <input value={d.forbiddenServices} onInput={(e) => onChange({ forbiddenServices: e.currentTarget.value })} spellcheck={false} />
          </PolicyField>
          <label class="checkbox">
            <input type="checkbox" checked={d.allowList} onChange={(e) => onChange({ allowList: e.currentTarget.checked })} />
            Allow only the ports listed below (any other open port is a breach)
          </label>
          {d.allowList && (
            <PolicyField id={`${id}-allowed`} label="Allowed ports" hint="Empty: no port may be open." error={errors.allowed_ports}>
              <input value={d.allowedPorts} onInput={(e) => onChange({ allowedPorts: e.currentTarget.value })} spellcheck={false} />
            </PolicyField>
          )}
          <PolicyField id={`${id}-severity`} label="Severity of a breach" error={errors.severity}>
            <select value={d.severity} onChange={(e) => onChange({ severity: e.currentTarget.value as Severity })}>
              <HumanizedOptions values={FINDING_SEVERITIES} />
            </select>
          </PolicyField>
        </div>
      )}
      {!d.enabled && suggested && <p class="small muted">No policy. “Use suggested” fills in: no telnet, SMB, RDP, VNC or database ports.</p>}
    </section>
  );
}

/** A labelled control with its hint and, below it, its error (tied to it with aria-describedby and aria-invalid). */
function PolicyField({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  children: VNode<Record<string, unknown>>;
}) {
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  const control = cloneElement(children, { id, 'aria-describedby': described, 'aria-invalid': error ? 'true' : undefined });
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {control}
      {hint && (
        <span id={`${id}-hint`} class="hint">
          {hint}
        </span>
      )}
      {error && (
        <span id={`${id}-error`} class="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
