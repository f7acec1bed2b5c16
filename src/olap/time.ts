/** ClickHouse DateTime64 text ('2026-01-02 03:04:05.678', UTC) → ISO 8601. */
export function clickhouseTimeToIso(value: string): string {
  return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
}

/** A JS date → ClickHouse DateTime64(3) text in UTC ('2026-01-02 03:04:05.678'), as a parameter of that type parses it. */
export function chTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** ISO 8601 → ClickHouse DateTime64(3) text in UTC ('2026-01-02 03:04:05.678'). */
export function isoToClickhouseTime(value: string): string {
  return chTime(new Date(value));
}
