import type { ConfigSectionProps } from './config';
import { RetentionSettings } from './retention';

/** How long history is kept (one save), and a backup of the whole database to download. */
export function DataSettings({ config, onSaved }: ConfigSectionProps) {
  return (
    <>
      <h2>History</h2>
      <RetentionSettings config={config} onSaved={onSaved} />
      <h2>Backup</h2>
      <p class="small">
        A snapshot of the whole database (users and their password hashes, keys, configuration, inventory, scan history, audit log), taken while the
        service keeps running. Keep the file as private as the database. Restore it on the server, with the service stopped:{' '}
        <code>netwarden restore FILE</code>.
      </p>
      <div class="button-row">
        {/* A plain link: the browser downloads the file with the session cookie; the server names it. */}
        <a class="button" href="/api/backup" download>
          Download backup
        </a>
      </div>
    </>
  );
}
