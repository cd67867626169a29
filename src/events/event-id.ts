import { randomUUID } from 'node:crypto';

/**
 * A new event's id: a UUID of version 7 (RFC 9562), the Unix time in milliseconds first, then a
 * fraction of the millisecond in the 12 bits after the version (RFC 9562 §6.2, method 3), then 62
 * random bits. The embedded store indexes events by id: random (version 4) ids put each new event
 * on a random page of that index, which the commit then writes whole (about 27 of a push group's 77
 * pages); ids in time order land on its last pages, together. The clock is the monotonic one, so the
 * ids one process makes sort in the order it made them, with no state kept between calls.
 */
export const newEventId = (now: number = performance.timeOrigin + performance.now()): string => {
  const ms = Math.floor(now);
  const time = ms.toString(16).padStart(12, '0');
  const fraction = Math.floor((now - ms) * 4096)
    .toString(16)
    .padStart(3, '0');
  // A version 4 UUID's last 17 characters: its variant and 62 random bits.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${fraction}-${randomUUID().slice(19)}`;
};
