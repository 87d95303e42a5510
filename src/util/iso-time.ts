/**
 * `new Date(ms).toISOString()` (`2026-11-27T13:38:30.123Z`), for the clocks read on every request
 * (each log line's `time`, an API key's expiry check): the part up to the seconds is kept while
 * the second lasts, so a read costs a concatenation instead of a Date and its formatting.
 */
export function isoTime(ms: number = Date.now()): string {
  // Years 0000–9999 only (a four-digit year); anything else as Date writes it.
  if (!(ms >= 0 && ms < 253402300800000)) return new Date(ms).toISOString();
  const second = ms - (ms % 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second).toISOString().slice(0, 20);
  }
  const millis = ms - second;
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
let isoSecond = NaN;
let isoPrefix = '';
