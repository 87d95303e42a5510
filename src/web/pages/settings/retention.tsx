import { useState } from 'preact/hooks';
import { RETENTION_DAYS } from '../../../core/limits.js';
import { WholeNumberInput } from '../../components/form-parts';
import { ErrorMessage, Field, Notice } from '../../components/ui';
import { plural } from '../../format';
import { useAction } from '../../hooks';
import { saveConfig, type ConfigSectionProps } from './config';

/** What the retention setting does, in words: 0 keeps everything. */
function retentionText(days: number): string {
  return days === 0 ? 'everything is kept.' : `history older than ${plural(days, 'day')} is deleted.`;
}

/** How long scans, changes and audit entries are kept (`retention.days`). */
export function RetentionSettings({ config, onSaved }: ConfigSectionProps) {
  const [days, setDays] = useState(String(config.retention.days));
  const [done, setDone] = useState(false);

  const save = useAction(async () => {
    setDone(false);
    const next = await saveConfig({ retention: { days: Number(days) } });
    onSaved(next);
    setDays(String(next.retention.days));
    setDone(true);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void save.run();
  };

  return (
    <>
      <p class="muted small">
        Scans with their results, changes and audit log entries older than the number of days below are deleted once a day; devices stay in the
        inventory. Now: {retentionText(config.retention.days)}
      </p>
      <form class="settings-narrow" onSubmit={submit}>
        <Field label="Keep history for (days)" hint={`${RETENTION_DAYS.min}–${RETENTION_DAYS.max}; 0 keeps everything.`}>
          <WholeNumberInput
            name="retention_days"
            range={RETENTION_DAYS}
            value={days}
            onInput={(value) => {
              setDays(value);
              setDone(false);
            }}
          />
        </Field>
        <ErrorMessage error={save.error} />
        {done && <Notice kind="success">Retention saved.</Notice>}
        <div class="button-row">
          <button type="submit" class="primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save retention'}
          </button>
        </div>
      </form>
    </>
  );
}
