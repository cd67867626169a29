import { randomBytes } from 'node:crypto';
import { encodeRef } from '../domain/objects/ref.ts';

/** A fresh random ref for a new object, user profile, key or work unit. */
export const newRef = (): string => encodeRef(randomBytes(8));
