import { useState } from 'preact/hooks';
import { SECRET_MASK } from '../../../core/limits.js';
import { Field } from '../../components/ui';
import type { Config } from '../../types';
import type { ConfigSectionProps } from './config';
import { SectionForm, useSectionSave } from './section-form';

type Sources = Config['name_sources'];
type SourceName = keyof Sources;

/** The form: each source's fields as text/booleans; passwords start empty ("set: leave empty to keep"). */
type Form = { [S in SourceName]: Record<string, string | boolean> };

function initialForm(s: Sources): Form {
  return {
    pihole: { ...s.pihole, password: '' },
    adguard: { ...s.adguard, password: '' },
    unifi: { ...s.unifi, password: '' },
    dhcp_leases: { ...s.dhcp_leases },
  };
}

/** A password left empty keeps the stored one (the mask); the server still clears it when the address changed (CONTRACT §9). */
function password(form: Form, stored: Sources, source: 'pihole' | 'adguard' | 'unifi'): string {
  const typed = String(form[source].password);
  return typed !== '' ? typed : stored[source].password === SECRET_MASK ? SECRET_MASK : '';
}

function payload(form: Form, stored: Sources): Sources {
  const text = (source: SourceName, key: string) => String(form[source][key]).trim();
  return {
    pihole: { enabled: form.pihole.enabled === true, url: text('pihole', 'url'), password: password(form, stored, 'pihole') },
    adguard: {
      enabled: form.adguard.enabled === true,
      url: text('adguard', 'url'),
      username: text('adguard', 'username'),
      password: password(form, stored, 'adguard'),
    },
    unifi: {
      enabled: form.unifi.enabled === true,
      url: text('unifi', 'url'),
      username: text('unifi', 'username'),
      password: password(form, stored, 'unifi'),
      site: text('unifi', 'site') || 'default',
      unifi_os: form.unifi.unifi_os === true,
      verify_tls: form.unifi.verify_tls === true,
    },
    dhcp_leases: {
      enabled: form.dhcp_leases.enabled === true,
      path: text('dhcp_leases', 'path'),
      format: text('dhcp_leases', 'format') as Sources['dhcp_leases']['format'],
    },
  };
}

/**
 * Names and MACs from the network's own records (`name_sources`): Pi-hole, AdGuard Home, UniFi
 * and a DHCP lease file, each off until enabled. Asked at every scan; they fill only what the scan
 * did not see.
 */
export function NameSourceSettings({ config, onSaved }: ConfigSectionProps) {
  const [form, setForm] = useState<Form>(() => initialForm(config.name_sources));
  const save = useSectionSave(
    () => ({ name_sources: payload(form, config.name_sources) }),
    onSaved,
    (next) => setForm(initialForm(next.name_sources)),
  );
  const set = (source: SourceName, key: string, value: string | boolean) => {
    setForm((f) => ({ ...f, [source]: { ...f[source], [key]: value } }));
    save.edited();
  };

  const enabled = (source: SourceName, label: string) => (
    <label class="checkbox">
      <input type="checkbox" checked={form[source].enabled === true} onChange={(e) => set(source, 'enabled', e.currentTarget.checked)} />
      {label}
    </label>
  );
  const text = (source: SourceName, key: string, label: string, hint?: string, placeholder?: string) => (
    <Field label={label} hint={hint}>
      <input
        type="text"
        name={`${source}_${key}`}
        value={String(form[source][key])}
        placeholder={placeholder}
        onInput={(e) => set(source, key, e.currentTarget.value)}
      />
    </Field>
  );
  const secret = (source: 'pihole' | 'adguard' | 'unifi', label: string) => (
    <Field
      label={label}
      hint={config.name_sources[source].password === SECRET_MASK ? 'Set. Leave empty to keep it; a new address needs it again.' : 'Not set.'}
    >
      <input
        type="password"
        name={`${source}_password`}
        autoComplete="new-password"
        value={String(form[source].password)}
        onInput={(e) => set(source, 'password', e.currentTarget.value)}
      />
    </Field>
  );

  return (
    <>
      <p class="muted small">
        At each scan Netwarden can ask your DNS filter, router or DHCP server for the names and MAC addresses it knows. They fill a hostname the scan
        did not find and a MAC it could not see (hosts behind a router); what the scan saw always wins. A source that is down or slow (5 s) never
        fails a scan: it is reported as a warning.
      </p>
      <SectionForm save={save} saved="Name sources saved." label="Save name sources" class="settings-narrow name-source-form">
        <fieldset>
          <legend>Pi-hole (v6)</legend>
          {enabled('pihole', 'Ask Pi-hole')}
          {text('pihole', 'url', 'Address', 'DHCP leases and the network table.', 'http://pi.hole')}
          {secret('pihole', 'App password')}
        </fieldset>
        <fieldset>
          <legend>AdGuard Home</legend>
          {enabled('adguard', 'Ask AdGuard Home')}
          {text('adguard', 'url', 'Address', 'Clients and DHCP leases.', 'http://192.168.1.2:3000')}
          {text('adguard', 'username', 'User name')}
          {secret('adguard', 'Password')}
        </fieldset>
        <fieldset>
          <legend>UniFi Network</legend>
          {enabled('unifi', 'Ask the UniFi controller')}
          {text('unifi', 'url', 'Controller address', 'The connected clients of the site.', 'https://192.168.1.1')}
          {text('unifi', 'username', 'User name', 'A local account; read-only is enough.')}
          {secret('unifi', 'Password')}
          {text('unifi', 'site', 'Site', 'As in the controller URL; usually "default".')}
          <label class="checkbox">
            <input type="checkbox" checked={form.unifi.unifi_os === true} onChange={(e) => set('unifi', 'unifi_os', e.currentTarget.checked)} />
            UniFi OS console (UDM, Cloud Key Gen2+, UniFi OS Server)
          </label>
          <label class="checkbox">
            <input type="checkbox" checked={form.unifi.verify_tls === true} onChange={(e) => set('unifi', 'verify_tls', e.currentTarget.checked)} />
            Check the controller's TLS certificate
          </label>
        </fieldset>
        <fieldset>
          <legend>DHCP lease file</legend>
          {enabled('dhcp_leases', 'Read a lease file')}
          {text('dhcp_leases', 'path', 'Path', 'Absolute path readable by this service.', '/var/lib/misc/dnsmasq.leases')}
          <Field label="Format">
            <select
              name="dhcp_leases_format"
              value={String(form.dhcp_leases.format)}
              onChange={(e) => set('dhcp_leases', 'format', e.currentTarget.value)}
            >
              <option value="auto">Detect</option>
              <option value="dnsmasq">dnsmasq (dnsmasq.leases)</option>
              <option value="isc">ISC dhcpd (dhcpd.leases)</option>
              <option value="kea">Kea (kea-leases4.csv)</option>
            </select>
          </Field>
        </fieldset>
      </SectionForm>
    </>
  );
}
