export interface WebTypeChecker {
  /** The errors of `tsc -p src/web` with src/web/api-types.ts replaced by `apiTypes`, formatted. */
  check(apiTypes: string): Promise<string[]>;
  close(): Promise<number>;
}

/** A type-checker of the web UI on a worker thread; `apiTypesFile` is the path the text replaces. */
export function webTypeChecker(apiTypesFile: string): WebTypeChecker;
