// The golden cases shared with the Rust test (crates/accountants-wasm/tests/golden.rs):
// the same requests, in the same order, to one instance of the wasm module must give exactly
// the responses the native build gives (numbers bit for bit), and the independent
// references must hold.
import test from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { load, DpinferError } from "../index.js";

const GOLDEN = new URL("../../crates/accountants-wasm/tests/golden.json", import.meta.url);
const golden = JSON.parse(await readFile(GOLDEN, "utf8"));

function at(value, path) {
  return path.reduce((v, key) => v[key], value);
}

test("every golden request gives its response, bit for bit (raw protocol)", async () => {
  const dp = await load();
  assert.ok(golden.cases.length >= 50);
  for (const c of golden.cases) {
    const text = c.raw ?? JSON.stringify(c.request);
    const got = JSON.parse(dp.callJson(text));
    assert.deepStrictEqual(got, c.response, c.name);
    for (const r of c.reference ?? []) {
      const x = at(got, r.path);
      assert.ok(
        Math.abs(x - r.value) <= r.rel_tol * Math.abs(r.value),
        `${c.name}: ${x} not within ${r.rel_tol} of ${r.value} (${r.source})`,
      );
    }
  }
});

// The same cases through the typed API: values equal the golden `ok`, errors are thrown
// DpinferErrors with the golden kind and message.
const API = {
  parse: (dp, q) => dp.parseEvent(q.event, { relation: q.relation }),
  epsilon: (dp, q) => dp.epsilon(q.events, q),
  delta: (dp, q) => dp.delta(q.events, q),
  sigma: (dp, q) => dp.sigma(q),
  max_steps: (dp, q) => dp.maxSteps({ ...q, tauG: q.tau_g, maxOrder: q.max_order }),
  claim: (dp, q) => dp.claim(q.events, q),
  verify_claim: (dp, q) => dp.verifyClaim(q.claim),
};

test("the typed API gives the golden values and errors", async () => {
  const dp = await load();
  let checked = 0;
  for (const c of golden.cases) {
    const op = c.request && API[c.request.op];
    if (!op) continue;
    checked += 1;
    if ("ok" in c.response) {
      assert.deepStrictEqual(op(dp, c.request), c.response.ok, c.name);
    } else {
      assert.throws(
        () => op(dp, c.request),
        (e) => {
          assert.ok(e instanceof DpinferError && e instanceof Error, c.name);
          assert.equal(e.kind, c.response.error.kind, c.name);
          assert.equal(e.message, c.response.error.message, c.name);
          return true;
        },
      );
    }
  }
  assert.ok(checked >= 30, `only ${checked} cases went through the typed API`);
});
