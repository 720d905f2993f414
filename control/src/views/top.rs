//! `rocectl top`: ports x priorities, redrawn, with rates from the
//! difference of two samples.

use proto::roceswitch::fabric::v1 as pb;

/// One `top` frame. `prev` is the previous sample taken `dt_s` seconds
/// earlier; without it the rate and paused columns show `-`. A (port,
/// priority) is paused when PFC frames arrived for it since the last frame.
pub fn top_frame(
    prev: Option<&[pb::PriorityCounters]>,
    now: &[pb::PriorityCounters],
    dt_s: f64,
) -> String {
    let mut out = format!(
        "{:>4} {:>4} {:>12} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10}\n",
        "port", "prio", "qdepth_B", "tx_Mbps", "pfc_rx", "paused", "pfc_tx", "ecn", "drops"
    );
    for c in now {
        let before = prev.and_then(|p| {
            p.iter()
                .find(|x| x.port == c.port && x.priority == c.priority)
        });
        let (rate, paused) = match before {
            Some(b) if dt_s > 0.0 => (
                format!(
                    "{:.1}",
                    c.tx_bytes.saturating_sub(b.tx_bytes) as f64 * 8.0 / dt_s / 1e6
                ),
                if c.pfc_rx_frames > b.pfc_rx_frames {
                    "yes"
                } else {
                    "no"
                },
            ),
            _ => ("-".to_string(), "-"),
        };
        out.push_str(&format!(
            "{:>4} {:>4} {:>12} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10}\n",
            c.port,
            c.priority,
            c.queue_depth_bytes,
            rate,
            c.pfc_rx_frames,
            paused,
            c.pfc_tx_frames,
            c.ecn_marked,
            c.drops
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_frame_shows_tx_rate_and_paused_from_deltas() {
        let before = pb::PriorityCounters {
            port: 1,
            priority: 3,
            tx_bytes: 1_000_000,
            pfc_rx_frames: 4,
            ..Default::default()
        };
        let quiet = pb::PriorityCounters {
            port: 1,
            priority: 0,
            ..Default::default()
        };
        let mut after = before;
        after.tx_bytes += 12_500_000; // 100 Mb in 0.5 s = 200 Mb/s
        after.pfc_rx_frames += 1;
        let frame = top_frame(Some(&[before, quiet]), &[quiet, after], 0.5);
        let rows: Vec<Vec<&str>> = frame
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows[0][..6], ["1", "0", "0", "0.0", "0", "no"]);
        assert_eq!(rows[1][..6], ["1", "3", "0", "200.0", "5", "yes"]);
    }
}
