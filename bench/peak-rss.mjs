// Peak memory figures of the benchmarks, plain JavaScript: the rebuild process (bench/rebuild-worker.mjs)
// runs without any TypeScript loader when it measures the compiled service.
import { readFileSync } from 'node:fs';

/** Peak resident set of a process so far (VmHWM in /proc/<pid>/status), in MiB; 0 where there is no /proc. */
export const peakRssMb = (pid) => {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : 0;
  } catch {
    return 0;
  }
};

/**
 * This process's own peak resident set, in MiB. Not process.resourceUsage().maxRSS: on Linux it
 * starts from the resident set of the process that spawned this one (fork copies the high-water
 * mark with the address space, exec keeps it), so a process spawned by a large bench process
 * reports the bench's size. maxRSS only without /proc.
 */
export const ownPeakRssMb = () => peakRssMb('self') || Math.round(process.resourceUsage().maxRSS / 1024);
