import type { Projector } from './projector.ts';

/** Every read model of the service. Later domains add theirs here. */
export const allProjectors = (): Projector[] => [];
