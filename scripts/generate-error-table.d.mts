/** README.md, absolute. */
export const README: string;
/** The markers around the generated table. */
export const TABLE_START: string;
export const TABLE_END: string;

/** `text` with the part between the markers replaced by `table`. */
export function withErrorTable(text: string, table: string): string;
