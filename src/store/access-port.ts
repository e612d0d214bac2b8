/** The store's port for DM pairing (DM_POLICY=pair): the people operators approved and the codes waiting. */

/** A person who asked to DM the agents, with the code an operator approves. */
export interface PairingCode {
  readonly code: string;
  readonly platform: string;
  readonly userId: string;
  readonly name: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A person an operator approved. */
export interface PairedPerson {
  readonly platform: string;
  readonly userId: string;
  readonly name: string;
  readonly approvedBy: string;
  readonly approvedAt: number;
}

export interface AccessPort {
  /**
   * The person's unexpired code, or `code` stored as theirs when fewer than `maxPending` unexpired codes wait on the
   * platform (expired ones are removed first); `full` otherwise. `fresh`: the code was made now.
   */
  requestCode(request: {
    readonly code: string;
    readonly platform: string;
    readonly userId: string;
    readonly name: string;
    readonly now: number;
    readonly expiresAt: number;
    readonly maxPending: number;
  }): Promise<{ readonly code: string; readonly fresh: boolean } | 'full'>;
  /** Approves an unexpired code once (its person is paired, the code removed); undefined when there is none. */
  approve(code: string, by: string, now: number): Promise<PairedPerson | undefined>;
  paired(platform: string, userId: string): Promise<boolean>;
  /** Ends the pairing of a person (by user id or name, case-insensitive) and drops their code; how many. */
  revoke(platform: string | undefined, who: string): Promise<number>;
  list(now: number): Promise<{ readonly paired: PairedPerson[]; readonly pending: PairingCode[] }>;
}
