import type { ComponentChildren } from 'preact';
import { useRoute } from 'preact-iso';
import { useId, useState } from 'preact/hooks';
import { answer, api } from '../../api';
import { ErrorMessage, Loading, PageHeader } from '../../components/ui';
import { useResource, useTitle } from '../../hooks';
import type { Config } from '../../types';
import { ApiKeys } from './api-keys';
import { AuditLog } from './audit-log';
import { DataSettings } from './data';
import { MetricsSettings } from './metrics';
import { NameSourceSettings } from './name-sources';
import { NetworkSettings } from './network';
import { NotificationSettings } from './notifications';
import { Updates } from './updates';
import { UsersSettings } from './users';
import { ZoneSettings } from './zones';
import './settings.css';

/** What a sub-page gets: the configuration (loaded once for the page) and where a save's answer goes. */
interface SectionContext {
  /** Renders `render` with the configuration, or its loading state or error. */
  withConfig: (render: (config: Config) => ComponentChildren) => ComponentChildren;
  onSaved: (config: Config) => void;
}

/** One settings sub-page: its address (`/settings/<id>`), its title, what it holds, and its body. */
interface SettingsSection {
  id: string;
  title: string;
  summary: string;
  render: (context: SectionContext) => ComponentChildren;
}

/** The sub-pages, in the order the menu lists them. Each saves on its own, with one save button. */
export const SETTINGS_SECTIONS: SettingsSection[] = [
  {
    id: 'network',
    title: 'Network and scanning',
    summary: 'The subnet, allowed scan targets, ports, engine, and when a device counts as offline.',
    render: ({ withConfig, onSaved }) => withConfig((c) => <NetworkSettings config={c} onSaved={onSaved} />),
  },
  {
    id: 'names',
    title: 'Name sources',
    summary: 'Device names from Pi-hole, AdGuard Home, UniFi or a DHCP lease file.',
    render: ({ withConfig, onSaved }) => withConfig((c) => <NameSourceSettings config={c} onSaved={onSaved} />),
  },
  {
    id: 'notifications',
    title: 'Notifications',
    summary: 'Channels that hear about changes, their filters, and the delivery log.',
    render: () => <NotificationSettings />,
  },
  {
    id: 'zones',
    title: 'Zones',
    summary: 'The zones devices can be put in (Trusted, IoT, Guest, …).',
    render: ({ withConfig, onSaved }) => withConfig((c) => <ZoneSettings zones={c.zones} onSaved={onSaved} />),
  },
  {
    id: 'users',
    title: 'Users and password',
    summary: 'Who can log in, and your own password.',
    render: () => <UsersSettings />,
  },
  {
    id: 'keys',
    title: 'API keys',
    summary: 'Keys for scripts and integrations.',
    render: () => <ApiKeys />,
  },
  {
    id: 'data',
    title: 'Data and backup',
    summary: 'How long history is kept, and a backup of everything to download.',
    render: ({ withConfig, onSaved }) => withConfig((c) => <DataSettings config={c} onSaved={onSaved} />),
  },
  {
    id: 'metrics',
    title: 'Metrics',
    summary: 'Who may read the Prometheus metrics.',
    render: ({ withConfig, onSaved }) => withConfig((c) => <MetricsSettings config={c} onSaved={onSaved} />),
  },
  {
    id: 'updates',
    title: 'Updates',
    summary: 'Whether this server checks for new releases, and what it found.',
    render: ({ withConfig, onSaved }) => withConfig((c) => <Updates config={c} onSaved={onSaved} />),
  },
  {
    id: 'audit',
    title: 'Audit log',
    summary: 'Who did what, and when.',
    render: () => <AuditLog />,
  },
];

/** `/settings`: the list of sub-pages; `/settings/<id>`: that sub-page, with the menu beside it on wide screens. */
export function SettingsPage() {
  const { params } = useRoute();
  const section = params.section ? SETTINGS_SECTIONS.find((s) => s.id === params.section) : undefined;
  useTitle(section ? `${section.title} · Settings` : 'Settings');
  if (!params.section) return <SettingsIndex />;
  if (!section) {
    return (
      <div class="settings">
        <PageHeader title="Settings" />
        <p>
          There is no settings page “{params.section}”. See <a href="/settings">all settings</a>.
        </p>
      </div>
    );
  }
  return <SettingsSubPage key={section.id} section={section} />;
}

function SettingsIndex() {
  return (
    <div class="settings">
      <PageHeader title="Settings" />
      <ul class="settings-index" aria-label="Settings pages">
        {SETTINGS_SECTIONS.map((s) => (
          <li key={s.id}>
            <a href={`/settings/${s.id}`}>{s.title}</a>
            <span class="muted small">{s.summary}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function SettingsSubPage({ section }: { section: SettingsSection }) {
  const loaded = useResource((signal) => answer(api.GET('/api/config', { signal })), []);
  // The answer of the last successful PUT wins over the first load.
  const [saved, setSaved] = useState<Config | null>(null);
  const config = saved ?? loaded.data;
  const withConfig = (render: (config: Config) => ComponentChildren) =>
    config ? render(config) : loaded.error ? <ErrorMessage error={loaded.error} onRetry={loaded.reload} /> : <Loading label="Loading settings…" />;
  const headingId = useId();

  return (
    <div class="settings settings-layout">
      <nav class="settings-nav" aria-label="Settings pages">
        <a href="/settings" class="settings-back">
          ← All settings
        </a>
        <ul>
          {SETTINGS_SECTIONS.map((s) => (
            <li key={s.id}>
              <a href={`/settings/${s.id}`} aria-current={s.id === section.id ? 'page' : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <section class="card settings-section" aria-labelledby={headingId}>
        <h1 id={headingId}>{section.title}</h1>
        {section.render({ withConfig, onSaved: setSaved })}
      </section>
    </div>
  );
}
