import { useState } from 'preact/hooks';
import { RETENTION_DAYS } from '../../../core/limits.js';
import { WholeNumberInput } from '../../components/form-parts';
import { Field } from '../../components/ui';
import { plural } from '../../format';
import type { ConfigSectionProps } from './config';
import { SectionForm, useSectionSave } from './section-form';

/** What the retention setting does, in words: 0 keeps everything. */
function retentionText(days: number): string {
  return days === 0 ? 'everything is kept.' : `history older than ${plural(days, 'day')} is deleted.`;
}

/** How long scans, changes and audit entries are kept (`retention.days`). */
export function RetentionSettings({ config, onSaved }: ConfigSectionProps) {
  const [days, setDays] = useState(String(config.retention.days));
  const save = useSectionSave(
    () => ({ retention: { days: Number(days) } }),
    onSaved,
    (next) => setDays(String(next.retention.days)),
  );

  return (
    <>
      <p class="muted small">
        Scans with their results, changes and audit log entries older than the number of days below are deleted once a day; devices stay in the
        inventory. Now: {retentionText(config.retention.days)}
      </p>
      <SectionForm save={save} saved="Retention saved." label="Save retention">
        <Field label="Keep history for (days)" hint={`${RETENTION_DAYS.min}–${RETENTION_DAYS.max}; 0 keeps everything.`}>
          <WholeNumberInput
            name="retention_days"
            range={RETENTION_DAYS}
            value={days}
            onInput={(value) => {
              setDays(value);
              save.edited();
            }}
          />
        </Field>
      </SectionForm>
    </>
  );
}
