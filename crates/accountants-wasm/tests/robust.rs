//! No panic and no NaN on any input: every op with special numbers, bad integers, wrong
//! types and random text answers with `{"ok": …}` or `{"error": {"kind", "message"}}`, and
//! no number in any answer is NaN (serde_json would have written a NaN as `null`, so a
//! `null` where a number belongs, or a missing number, fails too).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use dpinfer_accountants_wasm::Session;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The special reals, as a request spells them (the JavaScript wrapper sends non-finite
/// numbers as these strings).
fn specials() -> Vec<Value> {
    let mut v: Vec<Value> = [
        0.0,
        -0.0,
        5e-324,
        1e-300,
        1e-12,
        0.5,
        1.0,
        2.0,
        1e300,
        f64::MAX,
        -1.0,
        -f64::MAX,
    ]
    .into_iter()
    .map(Value::from)
    .collect();
    v.extend(["NaN", "Infinity", "-Infinity"].map(Value::from));
    v
}

/// Checks the envelope; returns the `ok` value or the error kind.
fn answer(session: &mut Session, request: &str) -> Result<Value, String> {
    let text = session.call(request);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let obj = v.as_object().unwrap();
    assert_eq!(obj.len(), 1, "{text}");
    if let Some(ok) = obj.get("ok") {
        Ok(ok.clone())
    } else {
        let err = &obj["error"];
        let kind = err["kind"].as_str().unwrap_or_else(|| panic!("{text}"));
        assert!(!kind.is_empty(), "{text}");
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{text}"
        );
        assert_ne!(kind, "Internal", "{text}");
        Err(kind.to_owned())
    }
}

/// The numbers that must be numbers in an answer (reports, sigma, filter statuses).
fn check_numbers(v: &Value, text: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if ["epsilon", "delta", "sigma"].contains(&k.as_str()) {
                    assert!(x.is_number() || x == "Infinity", "{k} is {x} in {text}");
                    if let Some(f) = x.as_f64() {
                        assert!(f >= 0.0, "{k} = {f} in {text}");
                    }
                }
                check_numbers(x, text);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| check_numbers(x, text)),
        _ => {}
    }
}

fn run(session: &mut Session, request: &Value) -> Result<Value, String> {
    let text = request.to_string();
    let r = answer(session, &text);
    if let Ok(v) = &r {
        check_numbers(v, &text);
    }
    r
}

#[test]
fn every_op_with_every_special_number() {
    let mut s = Session::new();
    let mut answered = 0;
    for x in specials() {
        let requests = [
            json!({"op": "epsilon", "events": ["gaussian:sigma=2,count=3", "laplace:b=3"], "delta": x, "accountant": "rdp"}),
            json!({"op": "epsilon", "events": ["gaussian:sigma=2,count=3"], "delta": x}),
            json!({"op": "epsilon", "events": ["pure:eps=0.5,count=3"], "delta": x, "accountant": "pure"}),
            json!({"op": "delta", "events": ["gaussian:sigma=2,count=3"], "epsilon": x}),
            json!({"op": "delta", "events": ["approx:eps=0.5,delta=1e-9,count=3"], "epsilon": x, "accountant": "approx"}),
            json!({"op": "delta", "events": ["zcdp:rho=0.1"], "epsilon": x, "accountant": "zcdp"}),
            json!({"op": "epsilon", "events": [[{"gaussian": {"sigma": x, "sensitivity": 1.0}}, 2]], "delta": 1e-5}),
            json!({"op": "epsilon", "events": [[{"laplace": {"scale": 1.0, "sensitivity": x}}, 2]], "delta": 1e-5, "accountant": "rdp"}),
            json!({"op": "sigma", "epsilon": x, "delta": 1e-5, "steps": 10}),
            json!({"op": "sigma", "epsilon": 1, "delta": x, "steps": 10, "method": "zcdp"}),
            json!({"op": "sigma", "epsilon": 1, "delta": 1e-5, "steps": 10, "sensitivity": x}),
            json!({"op": "max_steps", "sampler": "penalty", "tau": x, "epsilon": 6, "delta": 1e-6, "n": 1000}),
            json!({"op": "max_steps", "sampler": "penalty", "tau": 0.1, "a": x, "epsilon": 6, "delta": 1e-6, "n": 1000}),
            json!({"op": "max_steps", "sampler": "hmc", "tau": 0.5, "tau_g": x, "epsilon": 2, "delta": 1e-6, "n": 1000}),
            json!({"op": "max_steps", "sampler": "barker", "batch": 100, "epsilon": x, "delta": 1e-6, "n": 1000}),
            json!({"op": "claim", "events": ["pure:eps=0.5"], "delta": x, "accountant": "pure"}),
            json!({"op": "claim", "events": ["gaussian:sigma=3"], "delta": x}),
            json!({"op": "filter_new", "epsilon": x, "delta": 1e-6, "accountant": "zcdp"}),
            json!({"op": "filter_new", "epsilon": 1, "delta": x, "accountant": "approx"}),
        ];
        for r in &requests {
            if run(&mut s, r).is_ok() {
                answered += 1;
            }
        }
    }
    assert!(answered > 60, "only {answered} answers");
    // The filters opened above are real and can be charged with any event.
    for id in 1..=u32::try_from(s.open_filters()).unwrap() {
        for x in specials() {
            let r = json!({"op": "filter_charge", "id": id, "event": [{"gaussian": {"sigma": x, "sensitivity": 1.0}}, 1]});
            let _ = run(&mut s, &r);
        }
        let _ = run(&mut s, &json!({"op": "filter_status", "id": id}));
    }
}

#[test]
fn bad_integers_and_types_are_invalid_requests() {
    let mut s = Session::new();
    for steps in [
        json!(-1),
        json!(1.5),
        json!(1e20),
        json!("18446744073709551616"),
        json!("ten"),
        json!([1]),
        json!({}),
        json!(true),
    ] {
        let r = run(
            &mut s,
            &json!({"op": "sigma", "epsilon": 1, "delta": 1e-5, "steps": steps}),
        );
        assert_eq!(r, Err("InvalidRequest".to_owned()), "steps = {steps}");
    }
    for delta in [json!("0.5"), json!([]), json!({}), json!(true)] {
        let r = run(
            &mut s,
            &json!({"op": "epsilon", "events": ["gaussian:sigma=1"], "delta": delta}),
        );
        assert_eq!(r, Err("InvalidRequest".to_owned()), "delta = {delta}");
    }
    for id in [json!(-1), json!(4294967296_u64), json!(0), json!(7)] {
        let r = run(&mut s, &json!({"op": "filter_status", "id": id}));
        assert!(r.is_err(), "id = {id}");
    }
    // The largest count is accepted (and answered or refused with a typed error).
    let r = run(
        &mut s,
        &json!({"op": "epsilon", "events": [[{"gaussian": {"sigma": 1e9, "sensitivity": 1.0}}, u64::MAX]], "delta": 1e-5, "accountant": "zcdp"}),
    );
    assert!(
        r.is_ok() || r.as_ref().is_err_and(|k| k != "InvalidRequest"),
        "{r:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any text at all: a typed answer, never a panic.
    #[test]
    fn any_text_is_answered(text in "\\PC{0,200}") {
        let mut s = Session::new();
        let _ = answer(&mut s, &text);
    }

    /// Any event text in any op: a typed answer, never a panic, never NaN.
    #[test]
    fn any_event_text_is_answered(
        kind in prop::sample::select(vec!["gaussian", "laplace", "pure", "zcdp", "approx", "svt", "dlaplace", "binomial", "moments"]),
        key in prop::sample::select(vec!["sigma", "b", "eps", "rho", "delta", "sens", "c", "count", "poisson", "wor", "n", "m"]),
        value in prop::sample::select(vec!["1", "0", "-1", "0.5", "1e308", "1e-308", "NaN", "inf", "18446744073709551615", "3/7", "x", ""]),
        accountant in prop::sample::select(vec!["rdp", "zcdp", "pure", "approx", "all"]),
    ) {
        let mut s = Session::new();
        let event = format!("{kind}:{key}={value}");
        let _ = run(&mut s, &json!({"op": "parse", "event": event, "relation": "add/remove"}));
        let _ = run(&mut s, &json!({"op": "epsilon", "events": [event], "delta": 1e-6, "accountant": accountant}));
        let _ = run(&mut s, &json!({"op": "delta", "events": [event], "epsilon": 1.0, "accountant": accountant}));
    }
}
