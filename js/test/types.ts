// Type test of index.d.ts (compiled, never run): `cargo xtask js` runs
//   tsc --noEmit --strict --module es2022 --moduleResolution node --target es2022 --lib es2022,dom js/test/types.ts
// Every call below must type-check, and every `@ts-expect-error` line must be an error
// (tsc fails on an unused one), so the declarations are neither wrong nor too loose.
import {
  load,
  loadSync,
  DpinferError,
  Accountants,
  BudgetFilter,
  Composition,
  Report,
  BestReport,
  ParsedEvent,
  Sigma,
  MaxSteps,
  Claim,
  Verification,
  FilterStatus,
} from "../index.js";

export async function typed(): Promise<void> {
  const dp: Accountants = await load();
  const fromUrl: Accountants = await load(new URL("file:///x.wasm"));
  const fromBytes: Accountants = loadSync(new Uint8Array(0));
  const r: Report | BestReport = dp.epsilon(["gaussian:sigma=1,poisson=0.01,count=10000"], {
    delta: 1e-5,
    accountant: "rdp",
    relation: "add/remove",
    rule: "classic",
  });
  const eps: number = r.epsilon;
  const order: number | null = r.order;
  const d: Report | BestReport = dp.delta("gaussian:sigma=1", { epsilon: 1, accountant: "all" });
  const p: ParsedEvent = dp.parseEvent("gaussian:sigma=1", { relation: "replace-one" });
  const q: number | undefined = p.sampling.kind === "poisson" ? p.sampling.q : undefined;
  const s: Sigma = dp.sigma({ epsilon: 1, delta: 1e-5, steps: 10n, poisson: 0.01, method: "pld" });
  const m: MaxSteps = dp.maxSteps({ sampler: "hmc", tau: 0.5, tauG: 1, leapfrog: 5, epsilon: 2, delta: 1e-6, n: 10_000n });
  const c: Claim = dp.claim([[p.event, 3n]], { delta: 1e-5, accountant: "rdp_integers" });
  const v: Verification = dp.verifyClaim(c.claim);
  const v2: Verification = dp.verifyClaim(JSON.stringify(c.claim));
  const f: BudgetFilter = dp.budgetFilter({ epsilon: 1, delta: 1e-6, accountant: "zcdp" });
  const st: FilterStatus = f.charge("gaussian:sigma=10");
  const admitted: boolean = f.tryCharge([{ gaussian: { sigma: 10, sensitivity: 1 } }, 1]);
  const left: number = f.remaining();
  const spent: Report = f.spent();
  f.free();
  const comp: Composition = dp.compose("gaussian:sigma=2").add("laplace:b=1", [p.event, 2]);
  const ce: Report | BestReport = comp.epsilon(1e-5, { accountant: "pld" });
  const cc: Claim = comp.claim(1e-5);
  try {
    dp.call({ op: "version" });
  } catch (err) {
    if (err instanceof DpinferError) {
      const kind: string = err.kind;
      const key: string | null | undefined = err.details?.key;
      const reasons = err.details?.reasons?.map((x) => x.accountant);
      console.log(kind, key, reasons);
    }
  }
  const text: string = dp.callJson("{}");
  const version: string = dp.version;
  console.log(fromUrl, fromBytes, eps, order, d, q, s.sigma, m.steps, m.rdp_order, v.matches, v2.understated);
  console.log(st.remaining.epsilon, admitted, left, spent.conversion, ce, cc.description, text, version, dp.syntax);

  // @ts-expect-error: delta is a number
  dp.epsilon(["gaussian:sigma=1"], { delta: "1e-5" });
  // @ts-expect-error: epsilon needs a delta
  dp.epsilon(["gaussian:sigma=1"], {});
  // @ts-expect-error: steps is required
  dp.sigma({ epsilon: 1, delta: 1e-5 });
  // @ts-expect-error: no such accountant
  dp.budgetFilter({ epsilon: 1, delta: 0, accountant: "moments" });
  // @ts-expect-error: no such sampler
  dp.maxSteps({ sampler: "nuts", epsilon: 1, delta: 1e-5, n: 10 });
  // @ts-expect-error: an event is a string or a pair
  dp.epsilon([42], { delta: 1e-5 });
}
