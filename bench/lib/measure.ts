/** Summary statistics and process readings shared by the benchmarks and the soak run. */
import { readFileSync } from 'node:fs';

/** Nearest-rank percentile (`fraction` 0.99 for p99) of values sorted ascending; NaN when there are none. */
export function percentileOfSorted(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number;
}

/** Nearest-rank percentile of values in any order. */
export function percentile(values: Iterable<number>, fraction: number): number {
  return percentileOfSorted(Float64Array.from(values).sort(), fraction);
}

/** The median of the finite values (a run that measured nothing gives NaN and is left out); NaN when none is. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A process's resident set size in kB (Linux /proc), or undefined when it cannot be read (it has exited). */
export function rssKb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
