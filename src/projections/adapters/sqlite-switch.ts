import type Database from 'better-sqlite3';
import type { SwitchPlan } from '../read-store.ts';

/**
 * The mark a switch leaves on a checkpoint row while it is under way (column `switching`, JSON).
 * The live projection's row holds the plan; the retired row points to it (`of`).
 */
export interface SwitchMark {
  readonly token: string;
  readonly owner: string;
  /** Date.now() after which another store may take the switch over. */
  readonly expiresAt: number;
  readonly of: string;
  readonly plan?: SwitchPlan;
}

export interface CheckpointRow {
  readonly position: number;
  readonly generation: number;
  readonly switching: string | null;
}

/**
 * Adds the columns a switch needs to a checkpoints table made before they existed. Looked at again
 * under the write lock: processes opening one data directory together would otherwise both add them.
 */
export const migrateCheckpoints = (db: Database.Database): void => {
  const columns = () => new Set((db.prepare(`SELECT name FROM pragma_table_info('_checkpoints')`).all() as { name: string }[]).map((r) => r.name));
  if (columns().has('switching')) return;
  db.transaction(() => {
    const present = columns();
    if (!present.has('generation')) db.exec('ALTER TABLE _checkpoints ADD COLUMN generation INTEGER NOT NULL DEFAULT 0');
    if (!present.has('switching')) db.exec('ALTER TABLE _checkpoints ADD COLUMN switching TEXT');
  }).immediate();
};

/**
 * Switch marks on the embedded store's checkpoint rows. SQLite renames inside transactions, so a
 * switch run by swapIn never shows its mark to anybody; the two halves exist for the port's
 * contract (and a process that dies between them leaves a mark that the next reader finishes).
 */
export class SqliteSwitchMarks {
  private readonly read: Database.Statement<[string], CheckpointRow>;
  private readonly mark: Database.Statement<{ projection: string; mark: string; now: number }>;
  private readonly claim: Database.Statement<[string, string, string]>;

  constructor(db: Database.Database) {
    this.read = db.prepare('SELECT position, generation, switching FROM _checkpoints WHERE projection = ?');
    // A missing checkpoint gets a placeholder position: nobody reads it while the mark is there.
    this.mark = db.prepare(
      `INSERT INTO _checkpoints (projection, position, updated_at, switching) VALUES (@projection, 0, @now, @mark)
       ON CONFLICT (projection) DO UPDATE SET switching = excluded.switching`,
    );
    this.claim = db.prepare('UPDATE _checkpoints SET switching = ? WHERE projection = ? AND switching = ?');
  }

  row(projection: string): CheckpointRow | undefined {
    return this.read.get(projection);
  }

  /** Marks both checkpoints of `plan`; the caller runs it inside a write transaction. */
  begin(plan: SwitchPlan, token: string, owner: string, expiresAt: number): void {
    for (const name of [plan.projection, plan.retired]) {
      if (this.row(name)?.switching) throw new Error(`Projection ${plan.projection}: a switch of ${name} is already under way`);
    }
    const now = Date.now();
    const base = { token, owner, expiresAt, of: plan.projection };
    this.mark.run({ projection: plan.projection, mark: JSON.stringify({ ...base, plan }), now });
    this.mark.run({ projection: plan.retired, mark: JSON.stringify(base), now });
  }

  /** Takes over a lapsed switch: true when this store now owns it. */
  takeOver(projection: string, seen: string, mark: SwitchMark, owner: string, expiresAt: number): boolean {
    return this.claim.run(JSON.stringify({ ...mark, owner, expiresAt }), projection, seen).changes === 1;
  }
}

export const parseMark = (json: string): SwitchMark => JSON.parse(json) as SwitchMark;
