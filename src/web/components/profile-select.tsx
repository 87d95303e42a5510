import type { ComponentChildren } from 'preact';
import { SCAN_PROFILES, type ScanProfile } from '../types';
import { Field } from './ui';

/** What each scan profile does, in the words the forms show under the choice. */
export const PROFILE_HINTS: Record<ScanProfile, string> = {
  quick: 'Finds devices only; no ports. Seconds to a minute.',
  normal: 'Finds devices, checks the configured ports and identifies services and versions.',
  intensive: 'All 65,535 ports, OS detection and safe default scripts. Much slower.',
};

/**
 * The choice of a scan profile (Scan page, set-up, the default in Settings). The hint says what
 * the chosen profile does, unless the form gives its own.
 */
export function ProfileSelect({
  value,
  onChange,
  label = 'Profile',
  name = 'profile',
  hint,
}: {
  value: ScanProfile;
  onChange: (profile: ScanProfile) => void;
  label?: string;
  name?: string;
  hint?: ComponentChildren;
}) {
  return (
    <Field label={label} hint={hint ?? PROFILE_HINTS[value]}>
      <select name={name} value={value} onChange={(e) => onChange(e.currentTarget.value as ScanProfile)}>
        {SCAN_PROFILES.map((profile) => (
          <option key={profile} value={profile}>
            {profile}
          </option>
        ))}
      </select>
    </Field>
  );
}
