import { useEffect, useId, useState } from 'preact/hooks';
import { ApiError, answer, api, messageOf } from '../api';
import { fieldMessage } from '../plain';
import { Field } from './ui';

/** How long typing must pause before the next run times are asked for. */
const PREVIEW_DELAY_MS = 350;
/** How many next run times are shown. */
const PREVIEW_COUNT = 5;

/** The choices offered before "Custom", in the words a person uses. */
export const CRON_PRESETS: { label: string; cron: string }[] = [
  { label: 'Every hour', cron: '0 * * * *' },
  { label: 'Every 6 hours', cron: '0 */6 * * *' },
  { label: 'Daily at 03:00', cron: '0 3 * * *' },
  { label: 'Weekly on Sunday at 03:00', cron: '0 3 * * 0' },
];

/** The preset a cron string is, or undefined for anything else. */
export function presetOf(cron: string): string | undefined {
  const normalised = cron.trim().replace(/\s+/g, ' ');
  return CRON_PRESETS.find((p) => p.cron === normalised)?.label;
}

/** The browser's own time zone, the default for new schedules and quiet hours. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Every IANA zone the browser knows, for the time zone field's suggestions. */
export function timeZones(): string[] {
  const withList = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  return withList.supportedValuesOf?.('timeZone') ?? ['UTC'];
}

/** A moment as the clock in `timeZone` shows it: "Sun 30 Nov 2026, 03:00". */
export function formatInZone(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, {
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone,
    }).format(new Date(iso));
  } catch {
    return new Date(iso).toLocaleString();
  }
}

/** Asks the server when `cron` fires next in `timeZone`; its 400 detail when it is not valid. */
export function useCronPreview(cron: string, timeZone: string): { runs: string[] | null; error: string | null; checking: boolean } {
  const [state, setState] = useState<{ runs: string[] | null; error: string | null; checking: boolean }>({
    runs: null,
    error: null,
    checking: false,
  });
  useEffect(() => {
    if (!cron.trim()) {
      setState({ runs: null, error: null, checking: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, checking: true }));
    const timer = setTimeout(() => {
      answer(
        api.GET('/api/schedules/preview', {
          params: { query: { cron: cron.trim(), timezone: timeZone.trim() || 'UTC', count: PREVIEW_COUNT } },
          signal: controller.signal,
        }),
      ).then(
        (preview) => setState({ runs: preview.next_runs, error: null, checking: false }),
        (err: unknown) => {
          if (controller.signal.aborted) return;
          // Under the field, so without the parameter's name: "cron: …" reads "…".
          setState({ runs: null, error: err instanceof ApiError ? (fieldMessage(err, 'cron') ?? messageOf(err)) : String(err), checking: false });
        },
      );
    }, PREVIEW_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [cron, timeZone]);
  return state;
}

/** The next run times of a cron expression, or why it is not one, as the server says. */
export function CronPreviewList({ cron, timeZone, id }: { cron: string; timeZone: string; id?: string }) {
  const preview = useCronPreview(cron, timeZone);
  if (preview.error) {
    return (
      <p id={id} class="field-error" role="alert">
        {preview.error}
      </p>
    );
  }
  if (!preview.runs)
    return (
      <p id={id} class="hint">
        {preview.checking ? 'Checking…' : ''}
      </p>
    );
  return (
    <div id={id} class="cron-preview" aria-live="polite">
      <span class="hint">Next runs ({timeZone || 'UTC'}):</span>
      <ol aria-label="Next runs">
        {preview.runs.map((run) => (
          <li key={run}>
            <time dateTime={run}>{formatInZone(run, timeZone || 'UTC')}</time>
          </li>
        ))}
      </ol>
    </div>
  );
}

/**
 * A schedule's timing: a preset, or "Custom" with a five-field cron expression. The next five
 * run times show below as you type (asked of the server after a pause), or the server's reason
 * why the expression is not valid.
 */
export function CronChooser({ value, timeZone, onChange }: { value: string; timeZone: string; onChange: (cron: string) => void }) {
  const [custom, setCustom] = useState(() => presetOf(value) === undefined);
  const chosen = custom ? 'custom' : (presetOf(value) ?? 'custom');
  return (
    <>
      <Field label="When">
        <select
          name="preset"
          value={chosen}
          onChange={(e) => {
            const next = e.currentTarget.value;
            if (next === 'custom') {
              setCustom(true);
            } else {
              setCustom(false);
              onChange(CRON_PRESETS.find((p) => p.label === next)?.cron ?? value);
            }
          }}
        >
          {CRON_PRESETS.map((p) => (
            <option key={p.label} value={p.label}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom</option>
        </select>
      </Field>
      {chosen === 'custom' && (
        <Field label="Cron expression" hint="Five fields: minute hour day-of-month month day-of-week, e.g. 30 2 * * mon-fri.">
          <input name="cron" class="mono" value={value} spellcheck={false} autocomplete="off" onInput={(e) => onChange(e.currentTarget.value)} />
        </Field>
      )}
      <CronPreviewList cron={value} timeZone={timeZone} />
    </>
  );
}

/** An IANA time zone, with the zones the browser knows as suggestions. */
export function TimeZoneField({
  value,
  onChange,
  label = 'Time zone',
  name = 'timezone',
}: {
  value: string;
  onChange: (zone: string) => void;
  label?: string;
  name?: string;
}) {
  const listId = useId();
  return (
    <>
      <Field label={label} hint="An IANA name such as Europe/Berlin or UTC.">
        <input name={name} list={listId} value={value} autocomplete="off" spellcheck={false} onInput={(e) => onChange(e.currentTarget.value)} />
      </Field>
      <datalist id={listId}>
        {timeZones().map((zone) => (
          <option key={zone} value={zone} />
        ))}
      </datalist>
    </>
  );
}
