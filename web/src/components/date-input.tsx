import { useEffect, useState } from 'preact/hooks';
import { formatDate } from '../lib/format';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** YYYY-MM-DD of a real calendar day, or null. */
function isoOf(year: number, month: number, day: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

/** A typed day: "27 Nov 2026" (as the pages write dates), "27 November 2026", "2026-11-27" or "27/11/2026". */
export function parseDay(text: string): string | null {
  const trimmed = text.trim();
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(trimmed);
  if (iso) return isoOf(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const written = /^(\d{1,2})\s+([a-z]{3,})\.?,?\s+(\d{4})$/i.exec(trimmed);
  if (written) {
    const month = MONTHS.indexOf((written[2] ?? '').slice(0, 3).toLowerCase());
    return month < 0 ? null : isoOf(Number(written[3]), month + 1, Number(written[1]));
  }
  const numeric = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/.exec(trimmed);
  if (numeric) return isoOf(Number(numeric[3]), Number(numeric[2]), Number(numeric[1]));
  return null;
}

/**
 * A date field that shows its day the way every page writes dates ("27 Nov 2026"), whatever the
 * browser's locale: the native date input would show 11/27/2026 beside it on an American
 * browser. It takes that form, the ISO one and day/month/year; `value` and `onChange` are ISO
 * days (YYYY-MM-DD), as the API takes them. Text that is not a day makes the form refuse to submit.
 */
export function DateInput({
  id,
  value,
  onChange,
  required,
}: {
  id: string;
  value: string;
  onChange: (iso: string) => void;
  required?: boolean;
}) {
  const shown = (iso: string) => (parseDay(iso) ? formatDate(iso) : iso);
  const [text, setText] = useState(() => shown(value));
  // A change from outside (a quick range, a reset) replaces what is shown.
  useEffect(() => {
    if (parseDay(text) !== value) setText(shown(value));
  }, [value]);
  return (
    <input
      id={id}
      type="text"
      class="input-date"
      autoComplete="off"
      spellcheck={false}
      placeholder="27 Nov 2026"
      required={required}
      value={text}
      onInput={(event) => {
        const typed = event.currentTarget.value;
        const day = parseDay(typed);
        setText(typed);
        event.currentTarget.setCustomValidity(day || typed.trim() === '' ? '' : 'Write a day such as 27 Nov 2026.');
        if (day) onChange(day);
      }}
      onBlur={() => {
        const day = parseDay(text);
        if (day) setText(formatDate(day));
      }}
    />
  );
}
