/**
 * Prometheus metrics (GET /metrics, CONTRACT §11) with prom-client, in a registry of this app's
 * own (never prom-client's global one, so several apps in one process never mix). What must agree
 * across instances sharing a database (devices, ports, scans, changes, notifications) is read from
 * the database at scrape time (store.metrics); the process metrics and the HTTP request duration
 * histogram are this process's own.
 */
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { CHANGE_TYPES } from '../core/changes.js';
import { SCAN_STATUSES } from '../core/model.js';
import { CHANNEL_TYPES, DELIVERY_STATUSES } from '../core/notify-rules.js';
import { RISK_LEVELS, SEVERITIES } from '../core/severity.js';
import type { Store } from '../store/index.js';
import { SCAN_DURATION_BUCKETS, type MetricsSnapshot } from '../store/metrics.js';

/** `text/plain; version=0.0.4; charset=utf-8`: the Prometheus text exposition format. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The route label of a request no route matched (404s, the web UI's pages): raw paths would make a series per URL. */
export const UNMATCHED_ROUTE = '(unmatched)';

type Labels = Record<string, string | number>;
interface Sample {
  metricName?: string;
  labels: Labels;
  value: number;
}
type MetricType = 'gauge' | 'counter' | 'histogram';

/** Upper bounds of the request duration histogram's buckets, seconds. */
const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RequestSeries {
  labels: { method: string; route: string; status_code: number };
  /** Observations per bucket (not cumulative); above the last bound only in `count`. */
  buckets: number[];
  sum: number;
  count: number;
}

export class Metrics {
  readonly registry = new Registry();
  /** netwarden_http_request_duration_seconds: one series per method, route pattern and status code. */
  private readonly requests = new Map<string, RequestSeries>();
  /** The database's values for the scrape in progress. */
  private current: MetricsSnapshot | null = null;

  constructor(private readonly store: Store) {
    collectDefaultMetrics({ register: this.registry });
    this.registerRequestDurations();

    this.family('netwarden_devices', 'Devices in the inventory by risk level (the whole inventory)', 'gauge', (s) =>
      RISK_LEVELS.map((level) => ({
        labels: { risk_level: level },
        value: s.devicesByRisk.find((r) => r.risk_level === level)?.count ?? 0,
      })),
    );
    this.family('netwarden_devices_online', 'Devices currently online', 'gauge', (s) => [{ labels: {}, value: s.devicesOnline }]);
    this.family('netwarden_open_ports', 'Open ports over the inventory', 'gauge', (s) => [{ labels: {}, value: s.openPorts }]);
    this.family('netwarden_scans_total', 'Scans recorded, by status (older ones leave the count when retention.days deletes them)', 'counter', (s) =>
      SCAN_STATUSES.map((status) => ({ labels: { status }, value: s.scansByStatus.find((r) => r.status === status)?.count ?? 0 })),
    );
    this.family('netwarden_scan_duration_seconds', 'How long completed scans took', 'histogram', (s): Sample[] => [
      ...SCAN_DURATION_BUCKETS.map((bound, i) => ({
        metricName: 'netwarden_scan_duration_seconds_bucket',
        labels: { le: bound },
        value: s.scanDurations.buckets[i],
      })),
      { metricName: 'netwarden_scan_duration_seconds_bucket', labels: { le: '+Inf' }, value: s.scanDurations.count },
      { metricName: 'netwarden_scan_duration_seconds_sum', labels: {}, value: s.scanDurations.sum },
      { metricName: 'netwarden_scan_duration_seconds_count', labels: {}, value: s.scanDurations.count },
    ]);
    this.family('netwarden_changes_total', 'Changes detected between scans, by type and severity', 'counter', (s) =>
      CHANGE_TYPES.flatMap((change_type) =>
        SEVERITIES.map((severity) => ({
          labels: { change_type, severity },
          value: s.changes.find((r) => r.change_type === change_type && r.severity === severity)?.count ?? 0,
        })),
      ),
    );
    this.family('netwarden_notifications_total', 'Notification deliveries by channel type and status (pending, sent, failed)', 'counter', (s) => {
      const types = [...new Set([...CHANNEL_TYPES, ...s.notifications.map((r) => r.type)])];
      return types.flatMap((type) =>
        DELIVERY_STATUSES.map((status) => ({
          labels: { type, status },
          value: s.notifications.find((r) => r.type === type && r.status === status)?.count ?? 0,
        })),
      );
    });
  }

  /** Records one answered request; `route` is the route's pattern (`/api/devices/:device_id`), never the raw URL. */
  observeRequest(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    const routeLabel = route ?? UNMATCHED_ROUTE;
    // Neither a method nor a status code has a space: one key per series.
    const key = `${method} ${statusCode} ${routeLabel}`;
    let series = this.requests.get(key);
    if (!series) {
      series = { labels: { method, route: routeLabel, status_code: statusCode }, buckets: HTTP_DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.requests.set(key, series);
    }
    let bucket = 0;
    while (bucket < HTTP_DURATION_BUCKETS.length && seconds > HTTP_DURATION_BUCKETS[bucket]) bucket++;
    if (bucket < HTTP_DURATION_BUCKETS.length) series.buckets[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  /** The metrics in the text format: the database's aggregates read now, with this process's own. */
  async scrape(): Promise<string> {
    const snapshot = await this.store.metrics.snapshot();
    // The registry asks every family for its values synchronously at the start of metrics(), so
    // each scrape reports the snapshot it read even when scrapes overlap.
    this.current = snapshot;
    return this.registry.metrics();
  }

  /**
   * The request duration histogram, written as prom-client's Histogram writes it (same series,
   * label order and values), but counted by observeRequest with a lookup and an addition: on every
   * request, prom-client's own observe (label validation, hashing the label set) cost more than
   * the rest of the metrics and logging together.
   */
  private registerRequestDurations(): void {
    const name = 'netwarden_http_request_duration_seconds';
    const help = 'HTTP requests answered by this instance, by method, route pattern and status code';
    const values = (): Sample[] =>
      [...this.requests.values()].flatMap((series) => {
        let cumulative = 0;
        return [
          ...HTTP_DURATION_BUCKETS.map((le, i) => {
            cumulative += series.buckets[i];
            return { metricName: `${name}_bucket`, labels: { le, ...series.labels }, value: cumulative };
          }),
          { metricName: `${name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count },
          { metricName: `${name}_sum`, labels: { ...series.labels }, value: series.sum },
          { metricName: `${name}_count`, labels: { ...series.labels }, value: series.count },
        ];
      });
    const get = () => Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values: values() });
    this.registry.registerMetric({ name, help, type: 'histogram', aggregator: 'sum', get, reset: () => this.requests.clear() } as unknown as Metric);
  }

  /** A metric family whose values come from the database snapshot of the scrape. */
  private family(name: string, help: string, type: MetricType, values: (snapshot: MetricsSnapshot) => Sample[]): void {
    const get = () => {
      const snapshot = this.current;
      return Promise.resolve({ name, help, type, aggregator: 'sum', values: snapshot ? values(snapshot) : [] });
    };
    this.registry.registerMetric({ name, help, type, aggregator: 'sum', get, reset: () => {} } as unknown as Metric);
  }
}
