/** True when a database URL names PostgreSQL (`postgres://` or `postgresql://`); anything else is an SQLite file. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}
