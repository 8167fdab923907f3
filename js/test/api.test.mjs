// The typed API beyond the golden cases: errors, special and huge inputs, the stateful
// budget filter, claims round-tripped through JSON text, and the package's own files.
import test from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as pkg from "../index.js";
import { load, loadSync, DpinferError, Accountants, BudgetFilter, Composition } from "../index.js";

const dp = await load();
const DP_SGD = "gaussian:sigma=1,poisson=0.01,count=10000";

function throwsKind(f, kind, pattern) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof DpinferError, `not a DpinferError: ${e}`);
    assert.ok(e instanceof Error);
    assert.equal(e.name, "DpinferError");
    assert.equal(e.kind, kind, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

// Every number in a value, recursively.
function numbers(v, out = []) {
  if (typeof v === "number") out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => numbers(x, out));
  else if (v && typeof v === "object") Object.values(v).forEach((x) => numbers(x, out));
  return out;
}

test("non-finite JS numbers reach the Rust checks and come back as typed errors", () => {
  throwsKind(() => dp.epsilon(DP_SGD, { delta: NaN, accountant: "rdp" }), "InvalidParameter", /delta = NaN/);
  throwsKind(() => dp.epsilon(DP_SGD, { delta: NaN }), "InvalidParameter", /delta = NaN/);
  throwsKind(() => dp.epsilon(DP_SGD, { delta: Infinity }), "InvalidParameter", /delta = inf/);
  throwsKind(() => dp.delta(["gaussian:sigma=1"], { epsilon: -Infinity }), "InvalidParameter", /epsilon = -inf/);
  throwsKind(() => dp.delta(["gaussian:sigma=1"], { epsilon: -1 }), "InvalidParameter", /epsilon = -1/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: NaN, steps: 10 }), "InvalidParameter", /delta/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: 1e-5, steps: 10, sensitivity: Infinity }), "InvalidParameter", /sensitivity/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: 1e-5, steps: 10, poisson: NaN }), "InvalidParameter");
  throwsKind(() => dp.budgetFilter({ epsilon: NaN, delta: 1e-5 }), "InvalidParameter", /epsilon = NaN/);
  throwsKind(() => dp.epsilon(DP_SGD, {}), "InvalidRequest", /missing field `delta`/);
  throwsKind(() => dp.epsilon(DP_SGD, { delta: "1e-5" }), "InvalidRequest", /must be a number/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: 1e-5, steps: -3 }), "InvalidRequest", /non-negative integer/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: 1e-5, steps: 2.5 }), "InvalidRequest", /non-negative integer/);
  throwsKind(() => dp.sigma({ epsilon: 1, delta: 1e-5, steps: 0 }), "InvalidCount", /steps = 0/);
  throwsKind(() => dp.sigma(), "InvalidRequest", /missing field `epsilon`/);
});

test("bad events: typed grammar errors naming the key; wrong types", () => {
  throwsKind(() => dp.parseEvent("gaussian:sigma=abc"), "ParseEvent", /sigma/);
  assert.throws(() => dp.parseEvent("gaussian:sigma=abc"), (e) => e.details.key === "sigma");
  throwsKind(() => dp.parseEvent("gaussian:sigma=NaN"), "ParseEvent", /finite/);
  throwsKind(() => dp.parseEvent("moments:sigma=1"), "ParseEvent");
  throwsKind(() => dp.parseEvent("gaussian:sigma=1,poisson=0.1,wor=1/10"), "ParseEvent");
  throwsKind(() => dp.parseEvent("gaussian:sigma=0", { relation: "add/remove" }), "InvalidParameter", /sigma = 0/);
  throwsKind(() => dp.parseEvent("gaussian:sigma=1,poisson=2", { relation: "add/remove" }), "InvalidParameter", /q = 2/);
  throwsKind(() => dp.parseEvent(42), "InvalidRequest", /must be a string/);
  throwsKind(() => dp.epsilon([{ gaussian: 1 }], { delta: 1e-5 }), "InvalidRequest");
  throwsKind(() => dp.epsilon([[{ gaussian: { sigma: 1 } }, 1]], { delta: 1e-5 }), "InvalidRequest", /not an event/);
  throwsKind(() => dp.epsilon(null, { delta: 1e-5 }), "InvalidRequest", /missing field `events`/);
  throwsKind(() => dp.epsilon(["gaussian:sigma=1"], { delta: 1e-5, accountant: 7 }), "InvalidRequest");
  throwsKind(() => dp.epsilon(["gaussian:sigma=1,wor=10/100"], { delta: 1e-5 }), "IncompatibleRelation");
  throwsKind(() => dp.epsilon(["gaussian:sigma=1"], { delta: 1e-5, accountant: "pure" }), "Unsupported");
  throwsKind(() => dp.epsilon(["approx:eps=1,delta=0.001"], { delta: 1e-5, accountant: "approx" }), "DeltaTooSmall");
  throwsKind(() => dp.epsilon(["gaussian:sigma=1"], { delta: 1e-5, rule: "loose" }), "ParseName", /conversion rule/);
});

test("the grammar's canonical form round-trips and describes the event", () => {
  const p = dp.parseEvent("gaussian:sigma=1.1,poisson=0.01,count=1000", { relation: "add/remove" });
  assert.equal(p.spec, "gaussian:sigma=1.1,poisson=0.01,count=1000");
  assert.equal(dp.parseEvent(p.spec).spec, p.spec);
  assert.equal(p.count, 1000);
  assert.deepEqual(p.sampling, { kind: "poisson", q: 0.01 });
  assert.match(p.description, /PoissonSampled/);
  // The JSON form of the event is accepted back as a pair.
  const a = dp.epsilon([[p.event, p.count]], { delta: 1e-5, accountant: "rdp" });
  const b = dp.epsilon([p.spec], { delta: 1e-5, accountant: "rdp" });
  assert.deepEqual(a, b);
  assert.match(dp.syntax, /gaussian:sigma=/);
});

test("counts: BigInt beyond 2^53, and 2^64 - 1; huge and tiny reals give typed answers", () => {
  const big = dp.epsilon([[{ gaussian: { sigma: 1e6, sensitivity: 1 } }, 2n ** 60n]], { delta: 1e-5, accountant: "zcdp" });
  assert.ok(big.epsilon > 0 && Number.isFinite(big.epsilon));
  throwsKind(() => dp.epsilon([[{ gaussian: { sigma: 1, sensitivity: 1 } }, 2n ** 64n]], { delta: 1e-5 }), "InvalidRequest");
  throwsKind(() => dp.epsilon(["gaussian:sigma=1e-300,count=18446744073709551615"], { delta: 1e-5, accountant: "rdp" }), "NumericalFailure");
  const tiny = dp.epsilon(["gaussian:sigma=1e300"], { delta: 1e-5 });
  assert.ok(tiny.epsilon >= 0 && Number.isFinite(tiny.epsilon));
  throwsKind(() => dp.sigma({ epsilon: 1e308, delta: 1e-300, steps: 2n ** 63n }), "InvalidParameter");
});

test("no NaN ever: special values in every numeric field give a typed error or a number", () => {
  const specials = [NaN, Infinity, -Infinity, -1, 0, -0, 5e-324, 1e-300, 1e-12, 0.5, 1, 2, 1e300];
  let answered = 0;
  for (const x of specials) {
    const calls = [
      () => dp.epsilon(["gaussian:sigma=2,count=3", "laplace:b=3"], { delta: x, accountant: "rdp" }),
      () => dp.epsilon(["gaussian:sigma=2,count=3"], { delta: x }),
      () => dp.delta(["gaussian:sigma=2,count=3"], { epsilon: x }),
      () => dp.delta(["pure:eps=0.5,count=3"], { epsilon: x, accountant: "approx" }),
      () => dp.sigma({ epsilon: x, delta: 1e-5, steps: 10 }),
      () => dp.sigma({ epsilon: 1, delta: 1e-5, steps: 10, sensitivity: x, method: "zcdp" }),
      // (q = 5e-324 is left out here: the RDP σ search takes seconds for a subnormal q.)
      () => (x === 5e-324 ? 0 : dp.sigma({ epsilon: 3, delta: 1e-5, steps: 100, poisson: x })),
      () => dp.maxSteps({ sampler: "penalty", tau: x, epsilon: 6, delta: 1e-6, n: 1000 }),
      () => dp.maxSteps({ sampler: "barker", batch: 100, epsilon: x, delta: 1e-6, n: 1000 }),
      () => dp.claim(["pure:eps=0.5"], { delta: x, accountant: "pure" }),
      () => dp.budgetFilter({ epsilon: x, delta: 1e-6, accountant: "zcdp" }).status(),
    ];
    for (const f of calls) {
      try {
        const v = f();
        for (const n of numbers(v)) assert.ok(!Number.isNaN(n), `NaN in ${JSON.stringify(v)}`);
        answered += 1;
      } catch (e) {
        assert.ok(e instanceof DpinferError, String(e));
        assert.notEqual(e.kind, "Trap", e.message);
        assert.notEqual(e.kind, "Internal", e.message);
      }
    }
  }
  assert.ok(answered > 20, `only ${answered} answers`);
});

test("bad protocol input: not JSON, not UTF-8-safe text, huge text, unknown op", () => {
  assert.match(dp.callJson("{"), /"kind":"InvalidRequest"/);
  assert.match(dp.callJson(""), /not valid JSON/);
  assert.match(dp.callJson("x".repeat(1 << 20)), /not valid JSON/);
  assert.match(dp.callJson("\"\\ud800\""), /InvalidRequest/);
  assert.match(dp.callJson("[".repeat(10000)), /InvalidRequest/); // nesting limit, no stack overflow
  throwsKind(() => dp.call({ op: "nope" }), "InvalidRequest", /unknown op/);
  throwsKind(() => dp.call({}), "InvalidRequest", /missing field `op`/);
  // The module still answers after all of that.
  assert.equal(dp.version, "0.1.0");
});

test("composition: events added over time give the answer of the whole list", () => {
  const c = dp.compose("gaussian:sigma=1.1,poisson=0.01,count=400");
  assert.ok(c instanceof Composition);
  c.add("gaussian:sigma=1.1,poisson=0.01,count=600");
  assert.equal(c.events.length, 2);
  const whole = dp.epsilon(["gaussian:sigma=1.1,poisson=0.01,count=1000"], { delta: 1e-5, accountant: "rdp" });
  const parts = c.epsilon(1e-5, { accountant: "rdp" });
  assert.ok(Math.abs(parts.epsilon - whole.epsilon) <= 1e-12 * whole.epsilon);
  const best = c.epsilon(1e-5);
  assert.equal(best.accountant, "pld");
  assert.ok(best.epsilon <= parts.epsilon);
  assert.equal(best.each.length, 5);
  const d = c.delta(best.epsilon, { accountant: "pld" });
  assert.ok(d.delta <= 1e-5 * (1 + 1e-9), `${d.delta}`);
});

test("budget filter: charges, refuses over budget recording nothing, frees", () => {
  const f = dp.budgetFilter({ epsilon: 1, delta: 1e-6, accountant: "rdp" });
  assert.ok(f instanceof BudgetFilter);
  assert.equal(f.accountant, "rdp");
  assert.deepEqual(f.budget, { epsilon: 1, delta: 1e-6 });
  // An empty RDP accountant already reports ε > 0 at δ (the conversion's ln(1/δ)/(α−1)).
  const s0 = f.status();
  assert.ok(s0.spent.epsilon > 0 && s0.spent.epsilon < 0.05, `${s0.spent.epsilon}`);
  assert.equal(f.remaining(), s0.remaining.epsilon);
  const s1 = f.charge("gaussian:sigma=20,count=10");
  assert.ok(s1.spent.epsilon > 0 && s1.spent.epsilon < 1);
  assert.ok(Math.abs(s1.remaining.epsilon + s1.spent.epsilon - 1) < 1e-12);
  assert.ok(s1.remaining.epsilon + s1.spent.epsilon <= 1);
  throwsKind(() => f.charge("gaussian:sigma=1,count=100"), "BudgetExceeded", /nothing recorded/);
  assert.deepEqual(f.status(), s1);
  assert.equal(f.tryCharge("gaussian:sigma=1,count=100"), false);
  assert.equal(f.tryCharge("gaussian:sigma=100"), true);
  assert.ok(f.spent().epsilon > s1.spent.epsilon);
  throwsKind(() => f.charge("gaussian:sigma=1,wor=10/100"), "IncompatibleRelation");
  throwsKind(() => f.charge("gaussian:sigma=-1"), "InvalidParameter");
  f.free();
  f.free(); // twice is fine
  throwsKind(() => f.charge("gaussian:sigma=100"), "UnknownFilter");
  throwsKind(() => dp.call({ op: "filter_status", id: f.id }), "UnknownFilter");
  throwsKind(() => dp.call({ op: "filter_status", id: -1 }), "InvalidRequest");
  // Two filters are independent.
  const a = dp.budgetFilter({ epsilon: 1, delta: 0, accountant: "pure" });
  const b = dp.budgetFilter({ epsilon: 1, delta: 0, accountant: "pure", relation: "replace-one" });
  a.charge("pure:eps=0.9");
  assert.equal(b.remaining(), 1);
  assert.equal(b.relation, "replace-one");
  throwsKind(() => dp.budgetFilter({ epsilon: 1, delta: 0, accountant: "zcdp" }), "InvalidParameter", /delta = 0/);
  throwsKind(() => dp.budgetFilter({ epsilon: 1, delta: 1e-5, accountant: "gdp" }), "ParseName");
  a.free();
  b[Symbol.dispose]();
});

test("many filters opened and freed: the module's memory stays bounded", async () => {
  const bytes = await readFile(new URL("../dpinfer_accountants.wasm", import.meta.url));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  const local = new Accountants(instance);
  const warm = () => {
    for (let i = 0; i < 200; i++) {
      const f = local.budgetFilter({ epsilon: 5, delta: 1e-5, accountant: "rdp" });
      f.charge("gaussian:sigma=3,poisson=0.1,count=5");
      f.free();
    }
    // The numerical PLD allocates the most (grids and FFT buffers): 0.15 s a call here.
    for (let i = 0; i < 2; i++) {
      const f = local.budgetFilter({ epsilon: 5, delta: 1e-5, accountant: "pld" });
      f.charge("gaussian:sigma=3,poisson=0.1,count=5");
      f.free();
    }
  };
  warm();
  const before = instance.exports.memory.buffer.byteLength;
  warm();
  warm();
  assert.equal(instance.exports.memory.buffer.byteLength, before);
});

test("claims: made, stored as JSON text, verified; tampering is caught", () => {
  const made = dp.claim([DP_SGD], { delta: 1e-5, accountant: "rdp" });
  assert.match(made.description, /RDP accountant/);
  const stored = JSON.stringify(made.claim);
  const v = dp.verifyClaim(stored);
  assert.equal(v.matches, true);
  assert.equal(v.understated, false);
  assert.equal(v.recomputed.epsilon, made.epsilon);
  const tampered = JSON.parse(stored);
  tampered.report.epsilon = made.epsilon * 0.9;
  const t = dp.verifyClaim(tampered);
  assert.equal(t.matches, false);
  assert.equal(t.understated, true);
  const padded = JSON.parse(stored);
  padded.report.epsilon = made.epsilon * 2;
  const p = dp.verifyClaim(padded);
  assert.equal(p.matches, false);
  assert.equal(p.understated, false);
  throwsKind(() => dp.verifyClaim("{"), "InvalidRequest", /not a claim/);
  throwsKind(() => dp.verifyClaim({ ...tampered, extra: 1 }), "InvalidRequest", /unknown field/);
  throwsKind(() => dp.verifyClaim(), "InvalidRequest", /missing field `claim`/);
});

test("loading: loadSync from bytes; a foreign module is refused", async () => {
  const bytes = await readFile(new URL("../dpinfer_accountants.wasm", import.meta.url));
  const sync = loadSync(bytes);
  assert.deepEqual(
    sync.epsilon(DP_SGD, { delta: 1e-5, accountant: "rdp" }),
    dp.epsilon(DP_SGD, { delta: 1e-5, accountant: "rdp" }),
  );
  const empty = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]); // a valid, empty module
  assert.throws(() => loadSync(empty), (e) => e instanceof DpinferError && e.kind === "Load");
  const fromUrl = await load(new URL("../dpinfer_accountants.wasm", import.meta.url));
  assert.equal(fromUrl.version, dp.version);
  const { fileURLToPath } = await import("node:url");
  const path = fileURLToPath(new URL("../dpinfer_accountants.wasm", import.meta.url));
  assert.equal((await load(path)).version, dp.version);
  assert.equal((await load(new URL("../dpinfer_accountants.wasm", import.meta.url).href)).version, dp.version);
  assert.equal((await load(new WebAssembly.Module(bytes))).version, dp.version);
});

test("package: version in step with the crate; index.d.ts declares every export", async () => {
  const json = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
  assert.equal(json.version, dp.version);
  assert.equal(json.name, "@dpinfer/accountants");
  const dts = await readFile(new URL("../index.d.ts", import.meta.url), "utf8");
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:class|function|const) (\w+)/gm)].map((m) => m[1]));
  for (const name of Object.keys(pkg)) assert.ok(declared.has(name), `index.d.ts does not declare ${name}`);
  for (const name of declared) assert.ok(name in pkg, `index.d.ts declares ${name}, which index.js does not export`);
  // Every method of the classes is declared too.
  for (const [cls, proto] of [["Accountants", Accountants.prototype], ["BudgetFilter", BudgetFilter.prototype], ["Composition", Composition.prototype]]) {
    const body = dts.slice(dts.indexOf(`export class ${cls}`));
    const block = body.slice(0, body.indexOf("\n}\n"));
    for (const m of Object.getOwnPropertyNames(proto)) {
      if (m === "constructor" || m.startsWith("_")) continue;
      assert.match(block, new RegExp(`\\b${m}\\b`), `${cls}.${m} is not in index.d.ts`);
    }
  }
});

test("the README's example runs as written", async () => {
  const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { pathToFileURL } = await import("node:url");
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const block = readme.match(/```js\n([\s\S]*?)```/)[1];
  assert.match(block, /from "@dpinfer\/accountants"/);
  const index = new URL("../index.js", import.meta.url).href;
  const code = block.replace('"@dpinfer/accountants"', JSON.stringify(index));
  const dir = await mkdtemp(join(tmpdir(), "dpinfer-readme-"));
  try {
    const file = join(dir, "example.mjs");
    await writeFile(file, code);
    await import(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a trap in the module becomes a DpinferError, and the instance refuses further calls", () => {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let calls = 0;
  const fake = {
    exports: {
      memory,
      dpinfer_alloc: () => 8,
      dpinfer_call: () => {
        calls += 1;
        throw new WebAssembly.RuntimeError("unreachable");
      },
      dpinfer_result: () => 0,
    },
  };
  const broken = new Accountants(fake);
  throwsKind(() => broken.epsilon(DP_SGD, { delta: 1e-5 }), "Trap", /unreachable/);
  throwsKind(() => broken.call({ op: "version" }), "Trap", /trapped earlier/);
  assert.equal(calls, 1);
  const full = new Accountants({ exports: { ...fake.exports, dpinfer_alloc: () => 0 } });
  throwsKind(() => full.call({ op: "version" }), "OutOfMemory");
});
