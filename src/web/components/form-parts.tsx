import { humanize } from '../format';

/** A form's submit button (“Saving…” while `busy`) and its Cancel button, in a button row. */
export function SaveCancelButtons({ busy, label, onCancel }: { busy: boolean; label: string; onCancel: () => void }) {
  return (
    <div class="button-row">
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : label}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** One `<option>` per value, labelled in words (`port_opened` → “Port opened”). */
export function HumanizedOptions({ values }: { values: readonly string[] }) {
  return (
    <>
      {values.map((v) => (
        <option key={v} value={v}>
          {humanize(v)}
        </option>
      ))}
    </>
  );
}

/**
 * A required whole-number input bounded by one of core/limits.ts's ranges. Other attributes (the
 * `id` and `aria-describedby` a `Field` gives its control) go on the input.
 */
export function WholeNumberInput({
  range,
  onInput,
  ...attributes
}: {
  name: string;
  range: { min: number; max: number };
  value: string;
  onInput: (value: string) => void;
  id?: string;
  'aria-describedby'?: string;
}) {
  return (
    <input
      {...attributes}
      type="number"
      inputMode="numeric"
      required
      min={range.min}
      max={range.max}
      step={1}
      onInput={(e) => onInput(e.currentTarget.value)}
    />
  );
}

/**
 * A password input that reports its text. Required unless told otherwise; other attributes (the
 * `id` and `aria-describedby` a `Field` gives its control, a `minLength`) go on the input.
 */
export function PasswordInput({
  onInput,
  required = true,
  ...attributes
}: {
  name: string;
  autocomplete: 'current-password' | 'new-password';
  value: string;
  onInput: (value: string) => void;
  required?: boolean;
  minLength?: number;
  placeholder?: string;
  id?: string;
  'aria-describedby'?: string;
}) {
  return <input {...attributes} type="password" required={required} onInput={(e) => onInput(e.currentTarget.value)} />;
}
