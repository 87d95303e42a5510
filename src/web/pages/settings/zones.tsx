import { useState } from 'preact/hooks';
import { ZONE_NAME_MAX_LENGTH } from '../../../core/limits.js';
import { EmptyState, ErrorMessage, Field, Notice } from '../../components/ui';
import { useAction } from '../../hooks';
import type { Config } from '../../types';
import { saveConfig } from './config';

/** The zones devices can be put in: add one, remove one (each change saved at once). */
export function ZoneSettings({ zones, onSaved }: { zones: string[]; onSaved: (config: Config) => void }) {
  const [name, setName] = useState('');
  const [message, setMessage] = useState('');

  const save = useAction(async (next: string[], success: string) => {
    setMessage('');
    onSaved(await saveConfig({ zones: next }));
    setMessage(success);
  });

  const add = async (event: Event) => {
    event.preventDefault();
    const zone = name.trim();
    setMessage('');
    if (!zone) {
      save.setError(new Error('Type a name for the new zone first.'));
      return;
    }
    const existing = zones.find((z) => z.toLowerCase() === zone.toLowerCase());
    if (existing) {
      save.setError(new Error(`There is already a zone named “${existing}”.`));
      return;
    }
    if (await save.run([...zones, zone], `Zone “${zone}” added.`)) setName('');
  };

  return (
    <>
      <p class="muted small">
        Zones group devices by role or place, such as Servers or IoT; you choose a device's zone on its page. Removing a zone here leaves devices
        already in it unchanged.
      </p>
      {zones.length === 0 ? (
        <EmptyState title="No zones configured">Add one below to start grouping devices.</EmptyState>
      ) : (
        <ul class="zone-list">
          {zones.map((zone) => (
            <li key={zone}>
              <span>{zone}</span>
              <button
                type="button"
                class="zone-remove"
                aria-label={`Remove ${zone}`}
                title={zones.length === 1 ? 'At least one zone is needed' : `Remove ${zone}`}
                disabled={save.busy || zones.length === 1}
                onClick={() =>
                  void save.run(
                    zones.filter((z) => z !== zone),
                    `Zone “${zone}” removed.`,
                  )
                }
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {/* add() reports its failures through useAction, so its promise has nothing left to say. */}
      <form class="settings-inline-form" onSubmit={(event) => void add(event)}>
        <Field label="New zone">
          <input name="zone" maxLength={ZONE_NAME_MAX_LENGTH} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={save.busy}>
          Add zone
        </button>
      </form>
      <ErrorMessage error={save.error} />
      {message && <Notice kind="success">{message}</Notice>}
    </>
  );
}
