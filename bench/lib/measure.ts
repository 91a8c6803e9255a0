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

/** The machine's CPU time so far (/proc/stat, all CPUs): total and stolen by the hypervisor; undefined off Linux. */
export function machineTicks(): { total: number; steal: number } | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((sum, n) => sum + n, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/** The share of the machine's CPU time the hypervisor took between two readings (0 to 1), NaN when unknown. */
export function stealShare(before: ReturnType<typeof machineTicks>, after: ReturnType<typeof machineTicks>): number {
  if (!before || !after || after.total <= before.total) return Number.NaN;
  return (after.steal - before.steal) / (after.total - before.total);
}
