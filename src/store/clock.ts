/** ISO 8601 UTC timestamp with milliseconds and `Z`, the only time format stored and served. */
export function nowIso(date: Date = new Date()): string {
  return date.toISOString();
}

export function addSeconds(iso: string, seconds: number): string {
  return new Date(Date.parse(iso) + seconds * 1000).toISOString();
}
