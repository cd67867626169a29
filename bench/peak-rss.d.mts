// Types of bench/peak-rss.mjs, which stays plain JavaScript (see there).
export declare const peakRssMb: (pid: number | 'self') => number;
export declare const ownPeakRssMb: () => number;
