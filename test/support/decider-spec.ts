/**
 * Given / when / then for deciders (after Emmett's DeciderSpecification): given the events already
 * in a stream, when a command is decided, then exactly these events (checked against the stored
 * codecs too, as the event store reads them back), nothing, or a DomainError of a given kind.
 *
 *   const spec = deciderSpec(workUnitDecider);
 *   spec.given([created]).when({ type: 'TransitionWorkUnit', id, state: 'done' }).then([transitioned]);
 *   spec.given([]).when(transition).thenThrows('svc:workflow:no-such-workflow', { reason: 'not-found' });
 */
import * as assert from 'uvu/assert';
import type { Decider, DomainEvent } from '../../src/domain/decider.ts';
import { DomainError, type DomainErrorReason } from '../../src/domain/errors.ts';
import { domainCodecs } from '../../src/events/codecs.ts';

/** Recorded time of every given event. */
export const GIVEN_AT = new Date('2026-01-02T03:04:05.678Z');

export interface Refusal {
  readonly reason?: DomainErrorReason;
  /** The whole message, or a pattern it matches. */
  readonly message?: string | RegExp;
}

export interface Then<E> {
  /** The command decides exactly these events, in this order. */
  then(expected: readonly E[]): void;
  /** The command changes nothing: no events. */
  thenNothing(): void;
  /** The command is refused with a DomainError of this kind (and reason, message); answers the error. */
  thenThrows(kind: string, refusal?: Refusal): DomainError;
}

/** Every decided event must read back through its codec (after a JSON round trip, as the store keeps it). */
const assertStorable = (events: readonly DomainEvent[]) => {
  for (const event of events) {
    const entry = domainCodecs[event.type];
    assert.ok(entry, `${event.type} has a codec`);
    assert.ok(entry.codec.is(JSON.parse(JSON.stringify(event.data))), `${event.type} data matches its codec: ${JSON.stringify(event.data)}`);
  }
};

export const deciderSpec = <C, S, E extends DomainEvent>(decider: Decider<C, S, E>) => ({
  given: (events: readonly E[]) => ({
    when(command: C): Then<E> {
      const state = events.reduce((s, e) => decider.evolve(s, e, GIVEN_AT), decider.initialState);
      const decide = () => decider.decide(command, state);
      return {
        then(expected) {
          const decided = decide();
          assert.equal(decided, expected);
          assertStorable(decided);
          // What was decided must also fold (a decider never decides an event its own evolve refuses).
          decided.reduce((s, e) => decider.evolve(s, e, GIVEN_AT), state);
        },
        thenNothing() {
          assert.equal(decide(), []);
        },
        thenThrows(kind, refusal = {}) {
          let decided: readonly E[];
          try {
            decided = decide();
          } catch (e) {
            assert.instance(e, DomainError, `expected a DomainError, got ${String(e)}`);
            const error = e as DomainError;
            assert.is(error.kind, kind, `kind (message: ${error.message})`);
            if (refusal.reason !== undefined) assert.is(error.reason, refusal.reason, 'reason');
            if (typeof refusal.message === 'string') assert.is(error.message, refusal.message);
            else if (refusal.message) assert.match(error.message, refusal.message);
            return error;
          }
          return assert.unreachable(`expected a DomainError ${kind}, got events ${JSON.stringify(decided)}`) as never;
        },
      };
    },
  }),
});
