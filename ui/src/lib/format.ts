// Numbers as the tables show them.
export function bytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function percent(rate: number | undefined | null): string {
  return rate === undefined || rate === null || !Number.isFinite(rate) ? "-" : `${rate.toFixed(1)}%`;
}
