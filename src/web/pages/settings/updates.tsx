import { useId, useState } from 'preact/hooks';
import { answer, api } from '../../api';
import { ErrorMessage, Loading, Notice, Time } from '../../components/ui';
import { formatDateTime, plural } from '../../format';
import { useResource } from '../../hooks';
import { plainSocketErrors } from '../../plain';
import type { ConfigSectionProps } from './config';
import { SectionForm, useSectionSave } from './section-form';

/** Only http(s) links from the release feed become clickable. */
function safeUrl(url: string | null): string | null {
  return url && /^https?:\/\//i.test(url) ? url : null;
}

/** How long an answer of the feed is reused, in words. */
function cacheText(minutes: number): string {
  return minutes % 60 === 0 ? plural(minutes / 60, 'hour') : plural(minutes, 'minute');
}

/**
 * The update check, disclosed: what is asked of whom and when, a switch to turn it off (one
 * save), and while it is on, this server's version against the release feed.
 */
export function Updates({ config, onSaved }: ConfigSectionProps) {
  const [enabled, setEnabled] = useState(config.updates.enabled);
  const switchId = useId();
  const save = useSectionSave(
    () => ({ updates: { enabled } }),
    onSaved,
    (next) => setEnabled(next.updates.enabled),
  );
  const on = config.updates.enabled;
  return (
    <>
      <p class="small">
        When this page is opened, this server asks <span class="mono wrap-anywhere">{config.updates.feed_url}</span> for the latest release. The
        request carries this server's version (in its User-Agent header){config.updates.token ? ' and the feed token you set' : ''}, nothing about
        your network or devices; the answer is reused for {cacheText(config.updates.cache_minutes)}. Nothing is downloaded or installed.
      </p>
      <SectionForm save={save} saved={enabled ? 'Update check turned on.' : 'Update check turned off.'} label="Save update check">
        <div class="field">
          <label class="checkbox">
            <input
              type="checkbox"
              name="updates_enabled"
              checked={enabled}
              aria-describedby={switchId}
              onChange={(e) => {
                setEnabled(e.currentTarget.checked);
                save.edited();
              }}
            />
            Check for new releases
          </label>
          <span id={switchId} class="hint">
            Off: this server never contacts the release feed.
          </span>
        </div>
      </SectionForm>
      {on ? <UpdateStatus /> : <p class="muted small">The update check is off.</p>}
    </>
  );
}

/** This server's version against the release feed; "Check now" bypasses the server's cache. */
function UpdateStatus() {
  // Each "Check now" bumps the count; any count above zero asks the server to bypass its cache.
  const [forced, setForced] = useState(0);
  const check = useResource(
    (signal) => answer(api.GET('/api/updates/check', { params: { query: { force: forced > 0 ? true : undefined } }, signal })),
    [forced],
  );
  const data = check.data;
  const releaseUrl = safeUrl(data?.release_url ?? null);

  return (
    <section aria-label="Update status">
      {check.error && <ErrorMessage error={check.error} onRetry={check.reload} />}
      {!data && !check.error && <Loading label="Checking for updates…" />}
      {data && (
        <>
          <dl class="facts">
            <dt>Installed version</dt>
            <dd>{data.current_version}</dd>
            <dt>Latest release</dt>
            <dd>
              {data.latest_version ?? <span class="muted">unknown</span>}
              {data.published_at && <span class="muted"> · published {formatDateTime(data.published_at)}</span>}
            </dd>
            <dt>Last checked</dt>
            <dd>
              <Time iso={data.checked_at} />
            </dd>
          </dl>
          {data.error ? (
            <Notice kind="warning">
              <span class="wrap-anywhere">{plainSocketErrors(data.error)}</span>
            </Notice>
          ) : data.update_available ? (
            <Notice kind="warning">
              <span>
                Netwarden {data.latest_version} is available; this server runs {data.current_version}.{' '}
                {releaseUrl && (
                  <a href={releaseUrl} target="_blank" rel="noreferrer noopener">
                    See the release
                  </a>
                )}
              </span>
            </Notice>
          ) : (
            <Notice kind="success">Netwarden is up to date.</Notice>
          )}
          {data.update_available && data.release_notes && (
            <details class="release-notes">
              <summary>Release notes</summary>
              <div>{data.release_notes}</div>
            </details>
          )}
        </>
      )}
      <div class="button-row">
        <button type="button" onClick={() => setForced((n) => n + 1)} disabled={check.loading}>
          {check.loading && data ? 'Checking…' : 'Check now'}
        </button>
      </div>
    </section>
  );
}
