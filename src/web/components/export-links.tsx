import { withQuery } from '../api';

type Filters = Record<string, string | number | undefined>;

/**
 * Download links for GET /api/export/… in both formats, carrying the page's current filters (and
 * nothing else: paging and sorting are the page's own). The session cookie authenticates them.
 */
export function ExportLinks({ kind, filters }: { kind: 'devices' | 'changes'; filters: Filters }) {
  const href = (format: 'csv' | 'json') => withQuery(`/api/export/${kind}`, { ...filters, format });
  const what = kind === 'devices' ? 'the devices' : 'the changes';
  return (
    <div class="export-links" role="group" aria-label="Export">
      <a class="button" href={href('csv')} download title={`Download ${what} matching the filters as CSV`}>
        Export CSV
      </a>
      <a class="button" href={href('json')} download title={`Download ${what} matching the filters as JSON`}>
        Export JSON
      </a>
    </div>
  );
}
