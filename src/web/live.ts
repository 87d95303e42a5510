// Hooks that keep a page current from live events, and poll instead while the stream is down.
import { useEffect, useRef, useState } from 'preact/hooks';
import { answer, api } from './api';
import { useEvents, type EventName, type LiveEvent } from './events';
import { useInterval, useResource } from './hooks';
import type { ScanState } from './types';

/** How often the running scan is asked for while the event stream is down. */
const POLL_MS = 1000;
/**
 * With the stream up, a running scan that no event mentioned for this long is asked for once: the
 * events come from the process that runs the scan, and with several instances on one database
 * that may not be the one this page talks to.
 */
const SILENCE_MS = 15_000;
/** Bursts of events (one per device and change at the end of a scan) cost one reload. */
const REFRESH_DELAY_MS = 400;

const IDLE: ScanState = { scanning: false, scan_id: null, subnet: null, profile: null, progress: null };

export interface LiveScanState {
  /** The running scan and its progress; undefined until the first answer. */
  state: ScanState | undefined;
  error: unknown;
  reload: () => void;
  /** Whether events arrive (false: polling). */
  live: boolean;
  /** Shows a scan this page just started as running, unless its events already said it ended. */
  started: (scanId: number, subnet: string, profile: string) => void;
}

/**
 * The running scan, as `GET /api/scan/status` reports it, kept current by scan_started,
 * scan_progress and scan_finished events; while the stream is down it asks every second while a
 * scan runs. `onFinished` gets the id of a scan this page saw running once it has ended.
 */
export function useScanState(onFinished?: (scanId: number) => void): LiveScanState {
  const status = useResource((signal) => answer(api.GET('/api/scan/status', { signal })), []);
  const [state, setState] = useState<ScanState | undefined>(undefined);
  const finishedRef = useRef(onFinished);
  finishedRef.current = onFinished;
  const stateRef = useRef(state);
  // Scans seen ending: a trigger's answer can arrive after the events of a scan that short.
  const ended = useRef(new Set<number>());

  const update = (next: ScanState) => {
    const before = stateRef.current;
    stateRef.current = next;
    setState(next);
    if (before?.scanning && before.scan_id !== null && before.scan_id !== next.scan_id) finishedRef.current?.(before.scan_id);
  };

  useEffect(() => {
    if (status.data) update(status.data);
  }, [status.data]);

  const lastEventAt = useRef(Date.now());
  const { live } = useEvents(['scan_started', 'scan_progress', 'scan_finished'], (event) => {
    lastEventAt.current = Date.now();
    const current = stateRef.current;
    if (event.name === 'scan_started' || (event.name === 'scan_progress' && current?.scan_id !== event.data.scan_id)) {
      // A scan we did not know was running (or progress before its start event): ask once.
      if (event.name === 'scan_started') {
        const scan = event.data;
        update({ scanning: true, scan_id: scan.scan_id, subnet: scan.subnet, profile: scan.profile, progress: scan.progress });
      } else status.reload();
    } else if (event.name === 'scan_progress' && current) {
      update({ ...current, scanning: true, progress: event.data.progress });
    } else if (event.name === 'scan_finished') {
      ended.current.add(event.data.scan_id);
      if (current?.scan_id === event.data.scan_id) update(IDLE);
    }
  });

  // A stream that (re)opens may have missed events before it did: ask once.
  useOnLive(live, status.reload);
  const running = state?.scanning ?? false;
  useInterval(status.reload, POLL_MS, !live && running);
  useInterval(
    () => {
      if (Date.now() - lastEventAt.current < SILENCE_MS) return;
      lastEventAt.current = Date.now();
      status.reload();
    },
    SILENCE_MS / 3,
    live && running,
  );

  const started = (scanId: number, subnet: string, profile: string) => {
    if (ended.current.has(scanId)) finishedRef.current?.(scanId);
    else if (stateRef.current?.scan_id !== scanId) {
      lastEventAt.current = Date.now();
      update({ scanning: true, scan_id: scanId, subnet, profile, progress: null });
    }
  };
  return { state, error: status.error, reload: status.reload, live, started };
}

/**
 * How long after mounting a stream may open without the page loading again: what the page loaded
 * on mounting is that recent, so the events before the stream opened are in it.
 */
const FIRST_OPEN_GRACE_MS = 2000;

/** Calls `load` when the stream comes up after being down (or opens late), since events were missed meanwhile. */
function useOnLive(live: boolean, load: () => void): void {
  const was = useRef(live);
  const mountedAt = useRef(Date.now());
  useEffect(() => {
    if (live && !was.current && Date.now() - mountedAt.current > FIRST_OPEN_GRACE_MS) load();
    was.current = live;
  }, [live, load]);
}

/**
 * Calls `reload` shortly after any of the named events (a burst of them costs one call), and when
 * the stream comes back after being down. With no stream, nothing happens: the page keeps what it
 * loaded, as it did before live events existed.
 */
export function useRefreshOn(names: readonly EventName[], reload: () => void, filter?: (event: LiveEvent) => boolean): { live: boolean } {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const reloadRef = useRef(reload);
  reloadRef.current = reload;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const { live } = useEvents(names, (event) => {
    if (filter && !filter(event)) return;
    if (timer.current) return; // One reload is already on its way and will include this.
    timer.current = setTimeout(() => {
      timer.current = null;
      reloadRef.current();
    }, REFRESH_DELAY_MS);
  });
  useOnLive(live, reload);
  return { live };
}
