import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { answer, api } from '../../api';
import { ErrorMessage, Loading, PageHeader } from '../../components/ui';
import { useResource, useTitle } from '../../hooks';
import type { Config } from '../../types';
import { ApiKeys } from './api-keys';
import { AuditLog } from './audit-log';
import { MetricsSettings } from './metrics';
import { NameSourceSettings } from './name-sources';
import { NetworkSettings } from './network';
import { NotificationSettings } from './notifications';
import { PasswordChange } from './password';
import { RetentionSettings } from './retention';
import { Updates } from './updates';
import { ZoneSettings } from './zones';
import './settings.css';

/** The settings page: one card per section, each saving on its own and showing its own errors. */
export function SettingsPage() {
  useTitle('Settings');
  const loaded = useResource((signal) => answer(api.GET('/api/config', { signal })), []);
  // The answer of the last successful PUT wins over the first load.
  const [saved, setSaved] = useState<Config | null>(null);
  const config = saved ?? loaded.data;

  const configOr = (render: (config: Config) => ComponentChildren) =>
    config ? render(config) : loaded.error ? <ErrorMessage error={loaded.error} onRetry={loaded.reload} /> : <Loading label="Loading settings…" />;

  return (
    <div class="settings">
      <PageHeader title="Settings" />
      <Section title="Network and scanning">
        {configOr((c) => (
          <NetworkSettings config={c} onSaved={setSaved} />
        ))}
      </Section>
      <Section title="Name sources">
        {configOr((c) => (
          <NameSourceSettings config={c} onSaved={setSaved} />
        ))}
      </Section>
      <Section title="Notifications">
        <NotificationSettings />
      </Section>
      <Section title="Zones">
        {configOr((c) => (
          <ZoneSettings zones={c.zones} onSaved={setSaved} />
        ))}
      </Section>
      <Section title="Data retention">
        {configOr((c) => (
          <RetentionSettings config={c} onSaved={setSaved} />
        ))}
      </Section>
      <Section title="Metrics">
        {configOr((c) => (
          <MetricsSettings config={c} onSaved={setSaved} />
        ))}
      </Section>
      <Section title="API keys">
        <ApiKeys />
      </Section>
      <Section title="Password">
        <PasswordChange />
      </Section>
      <Section title="Audit log">
        <AuditLog />
      </Section>
      <Section title="Updates">
        <Updates />
      </Section>
    </div>
  );
}

function Section({ title, children }: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}
