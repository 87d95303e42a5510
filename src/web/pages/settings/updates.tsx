import { useState } from 'preact/hooks';
import { answer, api } from '../../api';
import { ErrorMessage, Loading, Notice, Time } from '../../components/ui';
import { formatDateTime } from '../../format';
import { useResource } from '../../hooks';

/** Only http(s) links from the release feed become clickable. */
function safeUrl(url: string | null): string | null {
  return url && /^https?:\/\//i.test(url) ? url : null;
}

/** This server's version against the release feed; "Check now" bypasses the server's cache. */
export function Updates() {
  // Each "Check now" bumps the count; any count above zero asks the server to bypass its cache.
  const [forced, setForced] = useState(0);
  const check = useResource(
    (signal) => answer(api.GET('/api/updates/check', { params: { query: { force: forced > 0 ? true : undefined } }, signal })),
    [forced],
  );
  const data = check.data;
  const releaseUrl = safeUrl(data?.release_url ?? null);

  return (
    <>
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
              <span class="wrap-anywhere">{data.error}</span>
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
    </>
  );
}
