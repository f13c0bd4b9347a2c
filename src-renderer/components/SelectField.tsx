/** A labelled filter picker: "every …" (the empty value) or one of the options. */
export function SelectField({
  label,
  name,
  value,
  anyLabel,
  options,
  onChange,
}: {
  label: string;
  name: string;
  value: string;
  /** The empty choice ("every role", "any status"). */
  anyLabel: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  onChange: (value: string) => void;
}) {
  return (
    <label className="inline-field">
      <span className="muted small">{label}</span>
      <select name={name} value={value} onChange={(e) => onChange(e.target.value)} aria-label={label}>
        <option value="">{anyLabel}</option>
        {value && !options.some((o) => o.value === value) ? <option value={value}>{value}</option> : null}
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
