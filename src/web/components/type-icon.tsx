import { DEVICE_TYPE_INFO, isDeviceType } from '../../core/device-types.js';

/** What a device is, as an icon with its name in words for screen readers and on hover (CONTRACT §15 types). */
export function TypeIcon({ type, confidence }: { type: string | null; confidence?: number }) {
  const known = isDeviceType(type) ? type : 'unknown';
  const info = DEVICE_TYPE_INFO[known];
  const title = known === 'unknown' ? 'Type not recognised' : confidence !== undefined ? `${info.label} (${confidence}% sure)` : info.label;
  return (
    <svg class="icon type-icon" viewBox="0 0 24 24" width="18" height="18" role="img" aria-label={title} focusable="false">
      <title>{title}</title>
      <path d={info.icon} />
    </svg>
  );
}

/** A type's name in words: `Access point`; null and unlisted values read as not recognised. */
export function typeLabel(type: string | null): string {
  return isDeviceType(type) && type !== 'unknown' ? DEVICE_TYPE_INFO[type].label : 'Not recognised';
}
