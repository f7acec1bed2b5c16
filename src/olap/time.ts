/** ClickHouse DateTime64 text ('2026-01-02 03:04:05.678', UTC) → ISO 8601. */
export function clickhouseTimeToIso(value: string): string {
  return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
}
