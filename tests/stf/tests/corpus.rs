//! Runs every corpus case and checks the outcome against `KNOWN_FAILURES`
//! (one `NAME  # reason` per line): the test fails if an unlisted case
//! fails, if a listed case passes (so the list stays true), or if the list
//! names a case that does not exist. Set `STF_FILTER=substring` to run some.

use std::collections::BTreeMap;

use stf_corpus::CASES;

fn known_failures() -> BTreeMap<String, String> {
    let text = include_str!("../KNOWN_FAILURES");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once('#') {
            Some((name, reason)) => (name.trim().to_string(), reason.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

#[test]
fn corpus() {
    let known = known_failures();
    let filter = std::env::var("STF_FILTER").ok();
    let (mut passed, mut failed) = (0, 0);
    let mut problems = Vec::new();
    for name in known.keys() {
        if !CASES.iter().any(|c| c.name == name) {
            problems.push(format!(
                "KNOWN_FAILURES names `{name}`, which is not in the corpus"
            ));
        }
    }
    for case in CASES {
        if filter.as_deref().is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        let expected_failure = known.get(case.name);
        match (case.run(), expected_failure) {
            (Ok(_), None) => {
                passed += 1;
                println!("PASS  {}", case.name);
            }
            (Ok(_), Some(_)) => {
                passed += 1;
                println!("PASS  {} (listed in KNOWN_FAILURES)", case.name);
                problems.push(format!(
                    "{} passes: remove it from KNOWN_FAILURES",
                    case.name
                ));
            }
            (Err(why), Some(reason)) => {
                failed += 1;
                println!("XFAIL {} ({reason})", case.name);
                let first = why.lines().take(3).collect::<Vec<_>>().join(" | ");
                println!("      {first}");
            }
            (Err(why), None) => {
                failed += 1;
                println!("FAIL  {}\n{why}", case.name);
                problems.push(format!("{} fails", case.name));
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
