import type { EventDecoder } from '../events/decode.ts';
import { objectsProjector } from './objects-projector.ts';
import type { Projector } from './projector.ts';
import { restApisProjector } from './rest-apis-projector.ts';
import { usersProjector } from './users-projector.ts';
import { filesProjector } from './files-projector.ts';
import { workUnitsProjector } from './work-units-projector.ts';

/** Every read model of the service. */
export const allProjectors = (decode: EventDecoder): Projector[] => [
  objectsProjector(decode),
  usersProjector(decode),
  workUnitsProjector(decode),
  restApisProjector(decode),
  filesProjector(decode),
];
