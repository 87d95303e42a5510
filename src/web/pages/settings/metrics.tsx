import { useState } from 'preact/hooks';
import type { ConfigSectionProps } from './config';
import { SectionForm, useSectionSave } from './section-form';

/** Who may read the Prometheus metrics (`metrics.public`). */
export function MetricsSettings({ config, onSaved }: ConfigSectionProps) {
  const [open, setOpen] = useState(config.metrics.public);
  const save = useSectionSave(
    () => ({ metrics: { public: open } }),
    onSaved,
    (next) => setOpen(next.metrics.public),
  );

  return (
    <>
      <p class="muted small">
        Prometheus reads the inventory, scans, changes and notification counts at <code>/metrics</code>. It needs an API key (create one for it under
        API keys) unless the metrics are public.
      </p>
      <SectionForm save={save} saved="Metrics access saved." label="Save metrics access">
        <div class="field">
          <label class="checkbox">
            <input
              type="checkbox"
              name="metrics_public"
              checked={open}
              onChange={(e) => {
                setOpen(e.currentTarget.checked);
                save.edited();
              }}
            />
            Anyone who can reach this server may read /metrics, without a key
          </label>
        </div>
      </SectionForm>
    </>
  );
}
