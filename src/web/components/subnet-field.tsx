import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { answer, api } from '../api';
import { plural } from '../format';
import { useAction } from '../hooks';
import type { NetworkDetection, SubnetCheck } from '../types';
import { ErrorMessage, FieldError, Notice } from './ui';

/** How long typing must pause before the subnet is checked. */
const CHECK_DELAY_MS = 300;

/**
 * Checks `subnet` against the server's scan rules (GET /api/network/check: the size limit and the
 * allowed targets) after typing pauses: null until the first answer, and while the field is empty.
 */
export function useSubnetCheck(subnet: string): SubnetCheck | null {
  const [check, setCheck] = useState<SubnetCheck | null>(null);
  useEffect(() => {
    const text = subnet.trim();
    if (!text) {
      setCheck(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      answer(api.GET('/api/network/check', { params: { query: { subnet: text } }, signal: controller.signal })).then(
        (result) => setCheck(result),
        // A check that could not be made blocks nothing: the save gives the server's answer.
        () => undefined,
      );
    }, CHECK_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [subnet]);
  // An answer about an earlier text is not shown under this one.
  return check && check.subnet === subnet.trim() ? check : null;
}

/**
 * The "Subnet" input with a Detect button beside it: Detect asks the server for its own networks
 * (`GET /api/network/detect`), fills in the suggestion and lists the other interfaces to pick from.
 */
export function SubnetField({
  value,
  onChange,
  hint,
  check,
  error,
}: {
  value: string;
  onChange: (subnet: string) => void;
  hint?: ComponentChildren;
  /** The rules check of the value (useSubnetCheck): its problem shows under the field, or its size when it passes. */
  check?: SubnetCheck | null;
  /** The server's refusal of the last save, about this field, in plain words. */
  error?: string | null;
}) {
  const id = useId();
  const problem = error ?? (check && !check.ok ? check.detail : null);
  const [detected, setDetected] = useState<NetworkDetection | null>(null);
  const detect = useAction(async () => {
    const result = await answer(api.GET('/api/network/detect'));
    setDetected(result);
    if (result.suggested_subnet) onChange(result.suggested_subnet);
  });
  return (
    <>
      <div class="field">
        <label for={id}>Subnet</label>
        <span class="input-row">
          <input
            id={id}
            name="subnet"
            required
            value={value}
            placeholder="192.168.1.0/24"
            aria-describedby={[problem ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined}
            aria-invalid={problem ? 'true' : undefined}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
          <button type="button" disabled={detect.busy} onClick={() => void detect.run()}>
            Detect
          </button>
        </span>
        {problem && <FieldError id={`${id}-error`}>{problem}</FieldError>}
        {!problem && check?.ok && check.addresses !== null && (
          <span class="hint subnet-size" aria-live="polite">
            {check.network} · {plural(check.addresses, 'address', 'addresses')}
          </span>
        )}
        {hint && (
          <span id={`${id}-hint`} class="hint">
            {hint}
          </span>
        )}
      </div>
      <ErrorMessage error={detect.error} />
      {detected && (
        <Notice>
          <div class="wrap-anywhere">
            {detected.suggested_subnet
              ? `This server is ${detected.local_ip ?? 'on the network'} (${detected.hostname}); suggested subnet ${detected.suggested_subnet}.`
              : 'No network interface with an IPv4 address was found; type the subnet yourself.'}
            {detected.interfaces.length > 1 && (
              <ul class="compact">
                {detected.interfaces.map((i) => (
                  <li key={`${i.name} ${i.address}`}>
                    <button type="button" class="button-link" onClick={() => onChange(i.subnet)}>
                      {i.subnet}
                    </button>{' '}
                    on {i.name} ({i.address})
                  </li>
                ))}
              </ul>
            )}
          </div>
        </Notice>
      )}
    </>
  );
}
