// Runs the no-std smoke module: node run.mjs <path/to/dpinfer_no_std_smoke.wasm>
// Instantiates with NO imports (the module must be self-contained), calls verify(), and exits
// with 0 when it returns 0; otherwise prints the failure code (module * 1000 + check index).
import { readFile } from "node:fs/promises";

const path = process.argv[2];
if (!path) {
  console.error("usage: node run.mjs <module.wasm>");
  process.exit(2);
}
const bytes = await readFile(path);
const { instance } = await WebAssembly.instantiate(bytes, {});
const code = instance.exports.verify();
if (code === 0) {
  console.log(`verify() = 0: all no_std checks passed (${bytes.length} byte module)`);
  process.exit(0);
}
console.error(`verify() = ${code}: module ${Math.floor(code / 1000)}, check ${code % 1000} failed`);
process.exit(1);
