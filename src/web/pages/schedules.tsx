import { useRef, useState } from 'preact/hooks';
import { DEFAULT_SCAN_PROFILE } from '../../core/model.js';
import { answer, api } from '../api';
import { CronChooser, TimeZoneField, browserTimeZone, presetOf } from '../components/cron-field';
import { SaveCancelButtons } from '../components/form-parts';
import { ProfileSelect } from '../components/profile-select';
import { ScanStatusBadge } from '../components/scan-status';
import { Dialog, EmptyState, ErrorMessage, Field, Loading, Notice, PageHeader, Time } from '../components/ui';
import { unlessField } from '../plain';
import { submitRunning, useAction, useResource, useSavedToggle, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import type { Config, Schedule, ScheduleInput, ScanProfile } from '../types';

const NAME_MAX_LENGTH = 100;

/** Scans that run by themselves: a list with next and last runs, and the form to add or edit one. */
export function SchedulesPage() {
  useTitle('Schedules');
  const schedules = useResource((signal) => answer(api.GET('/api/schedules', { signal })), []);
  const config = useResource((signal) => answer(api.GET('/api/config', { signal })), []);
  // A schedule's last run and status change when its scan starts and ends.
  useRefreshOn(['scan_queued', 'scan_started', 'scan_finished'], schedules.reload);
  const [editing, setEditing] = useState<Schedule | 'new' | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);

  const close = () => {
    setEditing(null);
    setTimeout(() => newButton.current?.focus());
  };

  return (
    <>
      <PageHeader title="Schedules">
        <button
          type="button"
          class="primary"
          ref={newButton}
          disabled={editing !== null}
          onClick={() => {
            setNotice(null);
            setEditing('new');
          }}
        >
          New schedule
        </button>
      </PageHeader>
      <p class="muted">
        Scheduled scans run by themselves. When a running scan covers the same addresses, or every parallel-scan slot is taken, the scheduled one
        waits in the queue and starts as soon as it can.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      {editing !== null && (
        <ScheduleForm
          schedule={editing === 'new' ? null : editing}
          config={config.data}
          onCancel={close}
          onSaved={(saved, created) => {
            setNotice(`Schedule “${saved.name}” ${created ? 'created' : 'saved'}.`);
            schedules.reload();
            close();
          }}
        />
      )}
      <ErrorMessage error={schedules.error} onRetry={schedules.reload} />
      {schedules.loading && !schedules.data && <Loading />}
      {schedules.data?.length === 0 && editing === null && (
        <EmptyState title="No schedules yet">Add one to scan your network every night, every hour or whenever suits you.</EmptyState>
      )}
      {schedules.data && schedules.data.length > 0 && (
        <ScheduleTable
          schedules={schedules.data}
          onEdit={(s) => {
            setNotice(null);
            setEditing(s);
          }}
          onChanged={schedules.reload}
          onNotice={setNotice}
        />
      )}
    </>
  );
}

function ScheduleTable({
  schedules,
  onEdit,
  onChanged,
  onNotice,
}: {
  schedules: Schedule[];
  onEdit: (s: Schedule) => void;
  onChanged: () => void;
  onNotice: (text: string) => void;
}) {
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  return (
    <div class="table-wrap">
      <table aria-label="Schedules">
        <thead>
          <tr>
            <th>Name</th>
            <th>When</th>
            <th>Next run</th>
            <th class="hide-narrow">Last run</th>
            <th>Enabled</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => (
            <ScheduleRow key={s.id} schedule={s} onEdit={() => onEdit(s)} onDelete={() => setDeleting(s)} onChanged={onChanged} onNotice={onNotice} />
          ))}
        </tbody>
      </table>
      <DeleteDialog
        schedule={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(s) => {
          setDeleting(null);
          onNotice(`Schedule “${s.name}” deleted.`);
          onChanged();
        }}
      />
    </div>
  );
}

function ScheduleRow({
  schedule: s,
  onEdit,
  onDelete,
  onChanged,
  onNotice,
}: {
  schedule: Schedule;
  onEdit: () => void;
  onDelete: () => void;
  onChanged: () => void;
  onNotice: (text: string) => void;
}) {
  const toggle = useSavedToggle(s.enabled, async (enabled) => {
    await api.PUT('/api/schedules/{schedule_id}', { params: { path: { schedule_id: s.id } }, body: { enabled } });
    onChanged();
  });
  const run = useAction(async () => {
    const started = await answer(api.POST('/api/schedules/{schedule_id}/run', { params: { path: { schedule_id: s.id } } }));
    onNotice(
      started.status === 'queued'
        ? `“${s.name}” is queued as scan #${started.scan_id}: it starts when the running scan ends.`
        : `“${s.name}” started as scan #${started.scan_id}.`,
    );
    onChanged();
  });
  const preset = presetOf(s.cron);
  return (
    <tr>
      <td class="wrap-anywhere">
        {s.name}
        <div class="small muted">
          {s.profile}
          {' · '}
          <span class="mono">{s.subnet ?? 'configured subnet'}</span>
        </div>
      </td>
      <td>
        {preset ?? <span class="mono">{s.cron}</span>}
        <div class="small muted">{s.timezone}</div>
      </td>
      <td>{s.enabled ? <Time iso={s.next_run_at} /> : <span class="muted">disabled</span>}</td>
      <td class="hide-narrow">
        {s.last_run_at ? (
          <>
            <Time iso={s.last_run_at} /> {s.last_status && <ScanStatusBadge status={s.last_status} />}
            {s.last_scan_id !== null && (
              <div class="small">
                <a href={`/scans?scan=${s.last_scan_id}`}>scan #{s.last_scan_id}</a>
              </div>
            )}
          </>
        ) : (
          <span class="muted">never</span>
        )}
      </td>
      <td>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={toggle.checked}
            disabled={toggle.busy}
            aria-label={`Enabled: ${s.name}`}
            onChange={(e) => toggle.set(e.currentTarget.checked)}
          />
          <span class="hide-narrow">{toggle.checked ? 'On' : 'Off'}</span>
        </label>
      </td>
      <td>
        <span class="button-row">
          <button type="button" class="small-button" disabled={run.busy} aria-label={`Run ${s.name} now`} onClick={() => void run.run()}>
            Run now
          </button>
          <button type="button" class="small-button" aria-label={`Edit ${s.name}`} onClick={onEdit}>
            Edit
          </button>
          <button type="button" class="small-button danger" aria-label={`Delete ${s.name}`} onClick={onDelete}>
            Delete
          </button>
        </span>
        <ErrorMessage error={toggle.error ?? run.error} />
      </td>
    </tr>
  );
}

function DeleteDialog({ schedule, onClose, onDeleted }: { schedule: Schedule | null; onClose: () => void; onDeleted: (s: Schedule) => void }) {
  const remove = useAction(async () => {
    if (!schedule) return;
    await api.DELETE('/api/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } } });
    onDeleted(schedule);
  });
  return (
    <Dialog open={schedule !== null} title="Delete schedule" onClose={onClose}>
      <p>Delete “{schedule?.name}”? Its past scans stay in the history; no further scan runs on this schedule.</p>
      <ErrorMessage error={remove.error} />
      <div class="button-row">
        <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>
          Delete schedule
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}

interface FormState {
  name: string;
  cron: string;
  timezone: string;
  subnet: string;
  profile: ScanProfile | null;
  enabled: boolean;
}

function ScheduleForm({
  schedule,
  config,
  onCancel,
  onSaved,
}: {
  schedule: Schedule | null;
  config?: Config;
  onCancel: () => void;
  onSaved: (saved: Schedule, created: boolean) => void;
}) {
  const [form, setForm] = useState<FormState>(() => ({
    name: schedule?.name ?? '',
    cron: schedule?.cron ?? '0 3 * * *',
    timezone: schedule?.timezone ?? browserTimeZone(),
    subnet: schedule?.subnet ?? '',
    profile: schedule?.profile ?? null,
    enabled: schedule?.enabled ?? true,
  }));
  const update = (patch: Partial<FormState>) => setForm((f) => ({ ...f, ...patch }));
  // Not chosen here: the server gives a new schedule scanning.default_profile, which the select shows.
  const profile = form.profile ?? config?.scanning.default_profile ?? DEFAULT_SCAN_PROFILE;

  const save = useAction(async () => {
    const body: ScheduleInput = {
      name: form.name.trim(),
      cron: form.cron.trim(),
      timezone: form.timezone.trim(),
      subnet: form.subnet.trim() || null,
      profile: form.profile ?? undefined,
      enabled: form.enabled,
    };
    const saved = schedule
      ? await answer(api.PUT('/api/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } }, body }))
      : await answer(api.POST('/api/schedules', { body }));
    onSaved(saved, schedule === null);
  });
  const submit = submitRunning(save);

  return (
    <section class="card edit-card" aria-label={schedule ? `Edit ${schedule.name}` : 'New schedule'}>
      <h2>{schedule ? `Edit “${schedule.name}”` : 'New schedule'}</h2>
      <form onSubmit={submit} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
        {/* A cron or time zone the server refuses shows once, under the expression (its preview says why). */}
        <ErrorMessage error={form.cron.trim() ? unlessField(save.error, 'cron', 'timezone') : save.error} />
        <Field label="Name">
          <input name="name" required maxLength={NAME_MAX_LENGTH} value={form.name} onInput={(e) => update({ name: e.currentTarget.value })} />
        </Field>
        <CronChooser value={form.cron} timeZone={form.timezone} onChange={(cron) => update({ cron })} />
        <TimeZoneField value={form.timezone} onChange={(timezone) => update({ timezone })} />
        <Field
          label="Subnet"
          hint={
            <>
              Leave empty to scan the configured subnet at each run
              {config ? (
                <>
                  {' '}
                  (now <span class="mono">{config.network.subnet}</span>)
                </>
              ) : (
                ''
              )}
              .
            </>
          }
        >
          <input
            name="subnet"
            value={form.subnet}
            placeholder={config?.network.subnet ?? ''}
            onInput={(e) => update({ subnet: e.currentTarget.value })}
          />
        </Field>
        <ProfileSelect value={profile} onChange={(p) => update({ profile: p })} />
        <label class="checkbox">
          <input type="checkbox" checked={form.enabled} onChange={(e) => update({ enabled: e.currentTarget.checked })} />
          Enabled
        </label>
        <SaveCancelButtons busy={save.busy} label={schedule ? 'Save schedule' : 'Create schedule'} onCancel={onCancel} />
      </form>
    </section>
  );
}
