/** The periods a timeline or chart offers, in days. */
export const PERIOD_DAYS = [7, 30, 90, 365] as const;

/** A select of the period ("Last 30 days"). Other attributes (the `id` a `Field` gives its control) go on the select. */
export function PeriodSelect({
  days,
  onChange,
  ...attributes
}: {
  days: number;
  onChange: (days: number) => void;
  id?: string;
  'aria-describedby'?: string;
}) {
  return (
    <select {...attributes} value={String(days)} onChange={(e) => onChange(Number(e.currentTarget.value))}>
      {PERIOD_DAYS.map((d) => (
        <option key={d} value={String(d)}>
          Last {d} days
        </option>
      ))}
    </select>
  );
}

/** A card's header: its title and the period select, labelled "Period" for screen readers. */
export function PeriodCardHeader({ title, days, onChange }: { title: string; days: number; onChange: (days: number) => void }) {
  return (
    <div class="card-header">
      <h2>{title}</h2>
      <label class="field">
        <span class="visually-hidden">Period</span>
        <PeriodSelect days={days} onChange={onChange} />
      </label>
    </div>
  );
}
