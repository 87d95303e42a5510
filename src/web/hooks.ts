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
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps decide when to load; `load` is read through loadRef
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

export interface Action<A extends unknown[]> {
  /** Runs the action; true when it succeeded. */
  run: (...args: A) => Promise<boolean>;
  busy: boolean;
  /** What the last run threw (an API error or a check of the form's own), for an ErrorMessage. */
  error: unknown;
  setError: (error: unknown) => void;
}

/** A user action (a form submit, a button): busy while it runs, its failure kept to show. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<void>): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

/** A form's `onSubmit`: keeps the browser from leaving the page and runs the action (its error shows in the form). */
export function submitRunning(action: Pick<Action<[]>, 'run'>): (event: Event) => void {
  return (event) => {
    event.preventDefault();
    void action.run();
  };
}

/** The width below which pages switch to their phone layout; the same as styles.css's @media rules. */
export const NARROW_QUERY = '(max-width: 720px)';

/** Whether a CSS media query matches, following changes (a rotated phone, a resized window). */
export function useMediaQuery(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const list = window.matchMedia(query);
    const changed = () => setMatches(list.matches);
    changed();
    list.addEventListener('change', changed);
    return () => list.removeEventListener('change', changed);
  }, [query]);
  return matches;
}

/**
 * An on/off setting saved by a request: shows the new value at once (a controlled checkbox would
 * otherwise snap back until the answer arrives), and the saved value again if the request fails.
 */
export function useSavedToggle(
  saved: boolean,
  save: (on: boolean) => Promise<void>,
): { checked: boolean; busy: boolean; error: unknown; set: (on: boolean) => void } {
  const [shown, setShown] = useState<boolean | null>(null);
  useEffect(() => setShown(null), [saved]);
  const action = useAction(save);
  const set = (on: boolean) => {
    setShown(on);
    void action.run(on).then((ok) => {
      if (!ok) setShown(null);
    });
  };
  return { checked: shown ?? saved, busy: action.busy, error: action.error, set };
}
