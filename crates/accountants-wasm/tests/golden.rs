//! The golden cases of `golden.json`, natively: every request, in order, to one
//! `Session`, must give exactly the stored response (the node test sends the same requests
//! to the wasm module), and every `reference` (an independent value) must hold within its
//! tolerance. `DPINFER_BLESS=1` rewrites the stored responses after a deliberate change.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use dpinfer_accountants_wasm::Session;
use serde_json::Value;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden.json");

fn at<'a>(v: &'a Value, path: &[Value]) -> &'a Value {
    path.iter().fold(v, |v, key| match key {
        Value::String(k) => &v[k.as_str()],
        Value::Number(i) => &v[usize::try_from(i.as_u64().unwrap()).unwrap()],
        _ => panic!("bad path element {key}"),
    })
}

#[test]
fn golden_cases_give_their_responses() {
    let text = std::fs::read_to_string(PATH).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let bless = std::env::var_os("DPINFER_BLESS").is_some_and(|v| !v.is_empty());
    let mut session = Session::new();
    let mut mismatches = Vec::new();
    for case in doc["cases"].as_array_mut().unwrap() {
        let name = case["name"].as_str().unwrap().to_owned();
        let request = match &case["raw"] {
            Value::String(raw) => raw.clone(),
            _ => serde_json::to_string(&case["request"]).unwrap(),
        };
        let got: Value = serde_json::from_str(&session.call(&request)).unwrap();
        if let Some(refs) = case.get("reference").and_then(Value::as_array) {
            for r in refs {
                let path = r["path"].as_array().unwrap();
                let x = at(&got, path).as_f64().unwrap_or(f64::NAN);
                let want = r["value"].as_f64().unwrap();
                let tol = r["rel_tol"].as_f64().unwrap();
                assert!(
                    (x - want).abs() <= tol * want.abs(),
                    "{name}: {x} is not within {tol} (relative) of {want} ({})",
                    r["source"]
                );
            }
        }
        if got != case["response"] {
            mismatches.push(format!(
                "{name}:\n  want {}\n  got  {got}",
                case["response"]
            ));
            case["response"] = got;
        }
    }
    if bless {
        let out = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        std::fs::write(PATH, out).unwrap();
    } else {
        assert!(
            mismatches.is_empty(),
            "{} golden case(s) differ (DPINFER_BLESS=1 rewrites them):\n{}",
            mismatches.len(),
            mismatches.join("\n")
        );
    }
}
