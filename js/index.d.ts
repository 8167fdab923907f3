// Types of @dpinfer/accountants (index.js). Numbers are IEEE doubles; a bound that is +∞ is
// `Infinity`, never NaN. Integer counts may be `bigint` above 2^53.

/** An event in the event grammar of `dpinfer account`, e.g.
 * `"gaussian:sigma=1.1,poisson=0.01,count=1000"` (see `Accountants.syntax`), or the pair
 * `[event, count]` of a claim's `events` (an event in its JSON form). */
export type EventInput = string | [EventJson, number | bigint];

/** An event tree in its JSON (serde) form, e.g. `{ gaussian: { sigma: 1, sensitivity: 1 } }`. */
export type EventJson = { [kind: string]: unknown };

/** The neighbouring relation; default `"add/remove"`. Also `"add_remove"`, `"replace_one"`. */
export type Relation = "add/remove" | "add-remove" | "add_remove" | "replace-one" | "replace_one";

/** An accountant of the Rust crate. */
export type AccountantName = "pure" | "approx" | "rdp" | "zcdp" | "pld" | "rdp_integers";

/** RDP/zCDP → (ε, δ) conversion: `"tightest"` (default) or `"classic"` (Mironov / Bun–Steinke). */
export type Rule = "tightest" | "classic";

/** Error kinds. An accountant error's kind is its Rust variant name, so the list can grow. */
export type ErrorKind =
  | "InvalidParameter"
  | "InvalidCount"
  | "IncompatibleRelation"
  | "Unsupported"
  | "InvalidGrid"
  | "TooDeep"
  | "DeltaTooSmall"
  | "BudgetExceeded"
  | "NumericalFailure"
  | "Infeasible"
  | "ParseEvent"
  | "ParseName"
  | "NoBound"
  | "UnknownFilter"
  | "InvalidRequest"
  | "Internal"
  | "OutOfMemory"
  | "Trap"
  | "Load"
  | (string & {});

/** Every failure is thrown as a DpinferError: `message` is the Rust error's message. */
export class DpinferError extends Error {
  readonly name: "DpinferError";
  readonly kind: ErrorKind;
  /** `ParseEvent`: `{ key }` (the key at fault, or null); `NoBound`: `{ reasons }`. */
  readonly details?: {
    key?: string | null;
    reasons?: { accountant: AccountantName; kind: ErrorKind; message: string }[];
  };
}

/** (ε, δ) from one accountant and the theorem that produced it. */
export interface Report {
  accountant: AccountantName;
  epsilon: number;
  delta: number;
  /** `"pure"`, `"basic_composition"`, `"optimal_composition"`, `"mironov"`, `"balle_cks"`,
   * `"bun_steinke"`, `"cks_zcdp"`, `"gaussian_pld"`, `"numerical_pld"`, … */
  conversion: string;
  /** The RDP/zCDP order that attained the bound, if any. */
  order: number | null;
}

/** The tightest answer of every accountant, with each one's answer or error. */
export interface BestReport extends Report {
  each: (Report | { accountant: AccountantName; error: { kind: ErrorKind; message: string } })[];
}

export interface QueryOptions {
  /** One accountant, or `"all"` (default): the tightest valid bound of every accountant. */
  accountant?: AccountantName | "all";
  relation?: Relation;
  rule?: Rule;
}

export interface ParsedEvent {
  /** The canonical text (parses back to the same event). */
  spec: string;
  /** The base mechanism, e.g. `"Gaussian"`. */
  kind: string;
  count: number;
  sampling:
    | { kind: "none" }
    | { kind: "poisson"; q: number }
    | { kind: "wor"; batch: number; population: number }
    | { kind: "wr"; batch: number; population: number };
  /** The event in prose, e.g. `"PoissonSampled(q = 0.01, Gaussian(σ = 1.1, Δ₂ = 1))"`. */
  description: string;
  /** The event's JSON form (as in a claim). */
  event: EventJson;
}

export interface SigmaOptions {
  epsilon: number;
  delta: number;
  /** Number of releases ≥ 1. */
  steps: number | bigint;
  /** ℓ₂ sensitivity of one release (default 1). */
  sensitivity?: number;
  /** Poisson sampling rate q ∈ (0, 1], if the releases are subsampled (add/remove). */
  poisson?: number;
  /** Default: `"pld"` without sampling, `"rdp"` with it. */
  method?: "pld" | "rdp" | "zcdp";
  rule?: Rule;
}

export interface Sigma {
  /** The smallest σ (rounded up) that keeps the releases within the budget. */
  sigma: number;
  method: "pld" | "rdp" | "zcdp";
  poisson: number | null;
  /** How, e.g. `"rdp, Poisson q = 0.01, add/remove"`. */
  description: string;
}

export interface MaxStepsOptions {
  /** `"penalty"` (noise sd τ·n^a·2c), `"hmc"` or `"barker"`. */
  sampler: "penalty" | "hmc" | "barker";
  epsilon: number;
  delta: number;
  /** Number of rows. */
  n: number | bigint;
  /** Penalty: noise multiplier τ; HMC: τ_l. */
  tau?: number;
  /** HMC: gradient noise multiplier τ_g. */
  tauG?: number;
  /** Penalty: exponent of n (default 0.5). */
  a?: number;
  /** HMC: leapfrog steps (default 10). */
  leapfrog?: number | bigint;
  /** Barker: minibatch size. */
  batch?: number | bigint;
  /** Barker: largest RDP order tried (default 256). */
  maxOrder?: number | bigint;
  /** Penalty and HMC: `"pld"` (default) or `"zcdp"`; Barker is always RDP. */
  method?: "pld" | "zcdp";
  rule?: Rule;
}

export interface MaxSteps {
  sampler: "penalty" | "hmc" | "barker";
  /** The largest number of iterations within the budget. */
  steps: number;
  /** Barker: the RDP order that allows them. */
  rdp_order: number | null;
}

/** A privacy claim as a value: store it, publish it, verify it with `verifyClaim`. */
export interface ClaimJson {
  relation: "add_remove" | "replace_one";
  events: [EventJson, number][];
  accountant: AccountantName;
  rule: Rule;
  report: { epsilon: number; delta: number; conversion: unknown };
}

export interface Claim {
  claim: ClaimJson;
  epsilon: number;
  delta: number;
  /** The claim in one paragraph of prose. */
  description: string;
}

export interface Verification {
  /** The stored claim equals a fresh accountant's claim, bit for bit. */
  matches: boolean;
  /** The stored ε or δ is below the recomputed one. */
  understated: boolean;
  claimed: { epsilon: number; delta: number };
  recomputed: Claim;
  accountant: AccountantName;
}

export interface FilterOptions {
  epsilon: number;
  /** 0 only with an accountant that reports at δ = 0 (pure, approx). */
  delta: number;
  /** Default `"pld"`. */
  accountant?: AccountantName;
  relation?: Relation;
  rule?: Rule;
}

export interface FilterStatus {
  id: number;
  accountant: AccountantName;
  relation: string;
  budget: { epsilon: number; delta: number };
  /** The spend so far at the filter's δ. */
  spent: Report;
  /** Budget ε minus spent ε, rounded down. */
  remaining: { epsilon: number };
}

/** An online (ε, δ) budget held by the module. */
export class BudgetFilter {
  readonly id: number;
  readonly accountant: AccountantName;
  readonly relation: string;
  readonly budget: { epsilon: number; delta: number };
  /** Admits the event (with its `count=`) or throws kind `"BudgetExceeded"`, recording nothing. */
  charge(event: EventInput): FilterStatus;
  /** Like `charge`, but `false` instead of throwing when the budget would be exceeded. */
  tryCharge(event: EventInput): boolean;
  status(): FilterStatus;
  spent(): Report;
  remaining(): number;
  /** Frees the filter now (it is also freed when garbage-collected, and by `using` where the
   * runtime has `Symbol.dispose`; not typed here, to keep TypeScript < 5.2 working). */
  free(): void;
}

/** Events composed so far; each query composes them afresh. */
export class Composition {
  add(...events: EventInput[]): this;
  readonly events: EventInput[];
  epsilon(delta: number, options?: QueryOptions): Report | BestReport;
  delta(epsilon: number, options?: QueryOptions): Report | BestReport;
  claim(delta: number, options?: Omit<QueryOptions, "accountant"> & { accountant?: AccountantName }): Claim;
}

/** The accountants, bound to one instance of the wasm module. */
export class Accountants {
  constructor(instance: WebAssembly.Instance);
  /** The version of the Rust crate inside. */
  readonly version: string;
  /** The event grammar, one kind a line. */
  readonly syntax: string;
  /** Parses (and, given `relation`, validates) one event. */
  parseEvent(event: string, options?: { relation?: Relation }): ParsedEvent;
  /** ε at `delta` of the composed events. */
  epsilon(events: EventInput | EventInput[], options: QueryOptions & { delta: number }): Report | BestReport;
  /** δ at `epsilon` of the composed events. */
  delta(events: EventInput | EventInput[], options: QueryOptions & { epsilon: number }): Report | BestReport;
  compose(...events: EventInput[]): Composition;
  sigma(options: SigmaOptions): Sigma;
  /** The iteration budget of a private MCMC sampler (replace-one neighbours). */
  maxSteps(options: MaxStepsOptions): MaxSteps;
  /** A claim for the composed events at `delta` (default accountant `"pld"`). */
  claim(
    events: EventInput | EventInput[],
    options: { delta: number; accountant?: AccountantName; relation?: Relation; rule?: Rule },
  ): Claim;
  /** Recomputes a stored claim (JSON text or object) with a fresh accountant. */
  verifyClaim(claim: string | ClaimJson): Verification;
  budgetFilter(options: FilterOptions): BudgetFilter;
  /** The protocol: a request object → its `ok` value; throws DpinferError. */
  call(request: { op: string; [key: string]: unknown }): unknown;
  /** The protocol as text: JSON request → JSON response (`{"ok": …}` or `{"error": …}`). */
  callJson(request: string): string;
}

/** Loads the module: by default the `dpinfer_accountants.wasm` next to index.js. */
export function load(source?: string | URL | BufferSource | WebAssembly.Module): Promise<Accountants>;

/** Loads the module synchronously from its bytes or a compiled module. */
export function loadSync(source: BufferSource | WebAssembly.Module): Accountants;
