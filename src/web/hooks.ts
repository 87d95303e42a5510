import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, keeping the current data on screen until the new answer arrives. */
  reload: () => void;
}

/**
 * Loads data for a component and reloads when `deps` change. Answers that arrive after a newer
 * request started (or after unmount) are dropped, so fast filter changes never show stale rows.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** Calls `tick` every `ms` milliseconds while `active`, and once straight away. */
export function useInterval(tick: () => void, ms: number, active = true): void {
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!active) return;
    tickRef.current();
    const timer = setInterval(() => tickRef.current(), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}

/** Sets the page title as "<title> · Netwarden". */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Netwarden` : 'Netwarden';
  }, [title]);
}
