import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { answer, api } from '../api';
import { useAction } from '../hooks';
import type { NetworkDetection } from '../types';
import { ErrorMessage, Notice } from './ui';

/**
 * The "Subnet" input with a Detect button beside it: Detect asks the server for its own networks
 * (`GET /api/network/detect`), fills in the suggestion and lists the other interfaces to pick from.
 */
export function SubnetField({ value, onChange, hint }: { value: string; onChange: (subnet: string) => void; hint?: ComponentChildren }) {
  const id = useId();
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
            aria-describedby={hint ? `${id}-hint` : undefined}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
          <button type="button" disabled={detect.busy} onClick={() => void detect.run()}>
            Detect
          </button>
        </span>
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
