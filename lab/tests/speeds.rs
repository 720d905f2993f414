//! `rocelab run --speed` beyond what the host agents can fill is refused
//! before anything is created, naming the flag that fixes it; the
//! simulator takes any speed.

mod common;

#[test]
fn a_live_run_faster_than_the_agents_is_refused_before_anything_starts() {
    let state = std::env::temp_dir().join(format!("rl-speeds-{}", std::process::id()));
    for speed in ["10G", "25G"] {
        let out = common::rocelab(&state, &["run", "--speed", speed]);
        assert_eq!(out.status.code(), Some(1), "{speed}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("--speed {speed}")), "{err}");
        assert!(err.contains("use --speed 1G or less, or --sim"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!state.exists(), "{speed}: the refusal created lab state");
    }
}
