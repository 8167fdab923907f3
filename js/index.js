// @dpinfer/accountants: the privacy accountants of dpinfer (Rust, no_std) compiled to
// WebAssembly, with a hand-written binding: JSON requests in, JSON responses out, across the
// module's linear memory (see README.md, "How it is built"). No dependencies.

const WASM_FILE = "dpinfer_accountants.wasm";

/** An error from the accountants: `kind` names the Rust error (see index.d.ts). */
export class DpinferError extends Error {
  constructor(kind, message, details) {
    super(message);
    this.name = "DpinferError";
    this.kind = kind;
    if (details !== undefined) this.details = details;
  }
}

// JSON has no NaN or ±Infinity: send them as strings, so the Rust checks reject them by
// parameter name (e.g. "invalid parameter delta = NaN") instead of seeing `null`. BigInt
// integers (counts above 2^53) go as decimal strings.
function replacer(_key, value) {
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return value.toString();
  return value;
}

// The module writes a +∞ bound as the string "Infinity" (never NaN).
function reviver(_key, value) {
  if (value === "Infinity") return Infinity;
  if (value === "-Infinity") return -Infinity;
  return value;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function isNode() {
  return typeof process !== "undefined" && process.versions != null && process.versions.node != null;
}

async function wasmBytes(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const url = source === undefined ? new URL(WASM_FILE, import.meta.url) : source;
  if (isNode()) {
    const { readFile } = await import("node:fs/promises");
    const { pathToFileURL } = await import("node:url");
    const text = String(url);
    return readFile(url instanceof URL ? url : text.startsWith("file:") ? new URL(text) : pathToFileURL(text));
  }
  const res = await fetch(url);
  if (!res.ok) throw new DpinferError("Load", `cannot fetch ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Loads the module and returns the API. `source`: nothing (the .wasm next to this file), a
 * URL or path, the module's bytes, or a compiled `WebAssembly.Module`.
 */
export async function load(source) {
  const bytes = await wasmBytes(source);
  const module = bytes instanceof WebAssembly.Module ? bytes : await WebAssembly.compile(bytes);
  return new Accountants(await WebAssembly.instantiate(module, {}));
}

/** Like `load`, synchronously, from the module's bytes or a compiled `WebAssembly.Module`. */
export function loadSync(bytes) {
  const module = bytes instanceof WebAssembly.Module ? bytes : new WebAssembly.Module(bytes);
  return new Accountants(new WebAssembly.Instance(module, {}));
}

// One event string is a list of one; anything else goes to the module as is (which says
// what is wrong with it).
function events(list) {
  return typeof list === "string" ? [list] : list;
}

/** The accountants, bound to one instance of the module (see index.d.ts for the types). */
export class Accountants {
  #exports;
  #broken = null;
  // Filters are freed when their JS object is garbage-collected (or by `free()`).
  #registry;

  constructor(instance) {
    this.#exports = instance.exports;
    for (const name of ["memory", "dpinfer_alloc", "dpinfer_call", "dpinfer_result"]) {
      if (!(name in this.#exports)) {
        throw new DpinferError("Load", `not the dpinfer accountants module: no export ${name}`);
      }
    }
    this.#registry =
      typeof FinalizationRegistry === "function"
        ? new FinalizationRegistry((id) => {
            if (this.#broken === null) {
              try {
                this.call({ op: "filter_free", id });
              } catch {
                // a failed free of an unreachable filter has nobody to tell
              }
            }
          })
        : null;
  }

  /** The raw protocol: one request object → the `ok` value, or throws a DpinferError. */
  call(request) {
    const response = JSON.parse(this.callJson(JSON.stringify(request, replacer)), reviver);
    if (response.error) {
      const { kind, message, details } = response.error;
      throw new DpinferError(kind, message, details);
    }
    return response.ok;
  }

  /** The raw protocol as text: a JSON request → the JSON response `{"ok": …}` or
   * `{"error": {kind, message}}`. Throws only if the module trapped. */
  callJson(text) {
    if (this.#broken !== null) {
      throw new DpinferError("Trap", `the module trapped earlier (${this.#broken}); load it again`);
    }
    const input = encoder.encode(String(text));
    const ex = this.#exports;
    try {
      const ptr = ex.dpinfer_alloc(input.length);
      if (ptr === 0) throw new DpinferError("OutOfMemory", "the module could not allocate the request");
      new Uint8Array(ex.memory.buffer, ptr, input.length).set(input);
      const len = ex.dpinfer_call(ptr, input.length);
      return decoder.decode(new Uint8Array(ex.memory.buffer, ex.dpinfer_result(), len));
    } catch (e) {
      if (e instanceof DpinferError) throw e;
      this.#broken = String(e && e.message ? e.message : e);
      throw new DpinferError("Trap", `the module trapped: ${this.#broken}`);
    }
  }

  /** The crate version of the module. */
  get version() {
    return this.call({ op: "version" });
  }

  /** The event grammar, one kind a line (as `dpinfer account --help` prints it). */
  get syntax() {
    return this.call({ op: "syntax" });
  }

  /** Parses an event of the grammar; validates it too when `relation` is given. */
  parseEvent(event, options = {}) {
    return this.call({ op: "parse", event, relation: options.relation });
  }

  /** ε at `delta` of the composed events, by one accountant or the tightest of all. */
  epsilon(eventList, options = {}) {
    const { delta, accountant, relation, rule } = options;
    return this.call({ op: "epsilon", events: events(eventList), delta, accountant, relation, rule });
  }

  /** δ at `epsilon` of the composed events, by one accountant or the tightest of all. */
  delta(eventList, options = {}) {
    const { epsilon, accountant, relation, rule } = options;
    return this.call({ op: "delta", events: events(eventList), epsilon, accountant, relation, rule });
  }

  /** A composition of events (each a grammar string or an `[event, count]` pair) to add to
   * and query (stateless: each query composes afresh). */
  compose(...initial) {
    return new Composition(this, initial);
  }

  /** The smallest Gaussian σ for `steps` releases within (epsilon, delta). */
  sigma(options) {
    const { epsilon, delta, steps, sensitivity, poisson, method, rule } = options ?? {};
    return this.call({ op: "sigma", epsilon, delta, steps, sensitivity, poisson, method, rule });
  }

  /** The largest number of iterations of a private MCMC sampler (DP penalty, DP HMC,
   * DP Barker) on `n` rows within (epsilon, delta), as `dpinfer account max-steps`. */
  maxSteps(options) {
    const { sampler, epsilon, delta, n, tau, tauG, a, leapfrog, batch, maxOrder, method, rule } = options ?? {};
    return this.call({
      op: "max_steps", sampler, epsilon, delta, n, tau, tau_g: tauG, a, leapfrog, batch, max_order: maxOrder, method, rule,
    });
  }

  /** A privacy claim (a value to store and publish) for the composed events at `delta`. */
  claim(eventList, options = {}) {
    const { delta, accountant, relation, rule } = options;
    return this.call({ op: "claim", events: events(eventList), delta, accountant, relation, rule });
  }

  /** Recomputes a stored claim (its JSON text or the object) with a fresh accountant. */
  verifyClaim(claim) {
    return this.call({ op: "verify_claim", claim });
  }

  /** An online budget: admits events while the composition stays within (epsilon, delta). */
  budgetFilter(options) {
    const { epsilon, delta, accountant, relation, rule } = options ?? {};
    const status = this.call({ op: "filter_new", epsilon, delta, accountant, relation, rule });
    const filter = new BudgetFilter(this, status);
    if (this.#registry) this.#registry.register(filter, status.id, filter);
    return filter;
  }

  /** @internal */
  _unregister(filter) {
    if (this.#registry) this.#registry.unregister(filter);
  }
}

/** Events composed so far; `epsilon`/`delta` ask the accountants about all of them. */
export class Composition {
  #dp;
  #events;

  constructor(dp, list) {
    this.#dp = dp;
    this.#events = list.slice();
  }

  /** Adds events (strings of the grammar with their own `count=`, or `[event, count]`
   * pairs). Returns `this`. */
  add(...more) {
    this.#events.push(...more);
    return this;
  }

  /** The events, in order. */
  get events() {
    return this.#events.slice();
  }

  epsilon(delta, options = {}) {
    return this.#dp.epsilon(this.#events, { ...options, delta });
  }

  delta(epsilon, options = {}) {
    return this.#dp.delta(this.#events, { ...options, epsilon });
  }

  claim(delta, options = {}) {
    return this.#dp.claim(this.#events, { ...options, delta });
  }
}

/** A budget filter held by the module (see `Accountants.budgetFilter`). */
export class BudgetFilter {
  #dp;
  #id;
  #freed = false;

  constructor(dp, status) {
    this.#dp = dp;
    this.#id = status.id;
    this.accountant = status.accountant;
    this.relation = status.relation;
    this.budget = status.budget;
  }

  get id() {
    return this.#id;
  }

  #live() {
    if (this.#freed) throw new DpinferError("UnknownFilter", `budget filter ${this.#id} was freed`);
    return this.#id;
  }

  /** Admits the event (with its `count=`) and returns the new status, or throws a
   * DpinferError of kind "BudgetExceeded" and records nothing. */
  charge(event) {
    return this.#dp.call({ op: "filter_charge", id: this.#live(), event });
  }

  /** Like `charge`, but returns `false` instead of throwing when the budget would be exceeded. */
  tryCharge(event) {
    try {
      this.charge(event);
      return true;
    } catch (e) {
      if (e instanceof DpinferError && e.kind === "BudgetExceeded") return false;
      throw e;
    }
  }

  /** `{ id, accountant, relation, budget, spent, remaining }`. */
  status() {
    return this.#dp.call({ op: "filter_status", id: this.#live() });
  }

  /** The spend so far at the filter's δ (a report). */
  spent() {
    return this.status().spent;
  }

  /** The ε left: budget minus spent, rounded down. */
  remaining() {
    return this.status().remaining.epsilon;
  }

  /** Frees the filter in the module now (it is also freed when garbage-collected). */
  free() {
    if (this.#freed) return;
    this.#freed = true;
    this.#dp._unregister(this);
    this.#dp.call({ op: "filter_free", id: this.#id });
  }

  [Symbol.dispose]() {
    this.free();
  }
}
