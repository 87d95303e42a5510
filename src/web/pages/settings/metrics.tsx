import { useState } from 'preact/hooks';
import { ErrorMessage, Notice } from '../../components/ui';
import { useAction } from '../../hooks';
import { saveConfig, type ConfigSectionProps } from './config';

/** Who may read the Prometheus metrics (`metrics.public`). */
export function MetricsSettings({ config, onSaved }: ConfigSectionProps) {
  const [open, setOpen] = useState(config.metrics.public);
  const [done, setDone] = useState(false);

  const save = useAction(async () => {
    setDone(false);
    const next = await saveConfig({ metrics: { public: open } });
    onSaved(next);
    setOpen(next.metrics.public);
    setDone(true);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void save.run();
  };

  return (
    <>
      <p class="muted small">
        Prometheus reads the inventory, scans, changes and notification counts at <code>/metrics</code>. It needs an API key (create one for it under
        API keys) unless the metrics are public.
      </p>
      <form class="settings-narrow" onSubmit={submit}>
        <div class="field">
          <label class="checkbox">
            <input
              type="checkbox"
              name="metrics_public"
              checked={open}
              onChange={(e) => {
                setOpen(e.currentTarget.checked);
                setDone(false);
              }}
            />
            Anyone who can reach this server may read /metrics, without a key
          </label>
        </div>
        <ErrorMessage error={save.error} />
        {done && <Notice kind="success">Metrics access saved.</Notice>}
        <div class="button-row">
          <button type="submit" class="primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save metrics access'}
          </button>
        </div>
      </form>
    </>
  );
}
